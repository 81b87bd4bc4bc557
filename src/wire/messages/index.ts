/**
 * Anthropic's Messages API on any engine: `POST /messages` (JSON, or with `stream: true`
 * named events, message_start … message_stop) and `POST /messages/count_tokens`, both in
 * Anthropic's error envelope, with the request id and the rate-limit headers under
 * Anthropic's names as well as the house's.
 */
import { streamsWhenAsked, type WireFormat, type WireHeaders } from '../wire-format.js';
import { CountTokensBody, MessagesBody, type CountTokensRequestBody, type MessagesRequestBody } from './body.js';
import { ANTHROPIC_ERRORS } from './errors.js';
import { MessageObject, MessageStreamEvent, TokenCountObject } from './response.js';
import { anthropicLabels } from '../call-labels.js';

const ANTHROPIC_HEADERS: WireHeaders = {
  requestId: 'request-id',
  renamed: {
    'x-ratelimit-limit-requests': 'anthropic-ratelimit-requests-limit',
    'x-ratelimit-remaining-requests': 'anthropic-ratelimit-requests-remaining',
  },
  // Accepted, any version (absent: 2023-06-01, the only one this wire speaks); recorded with the betas asked for.
  recorded: { anthropic_version: 'anthropic-version', anthropic_beta: 'anthropic-beta' },
};

export const messagesWire: WireFormat<MessagesRequestBody> = {
  path: '/messages',
  summary: 'Create a message (Anthropic Messages API; `stream: true` for SSE)',
  body: MessagesBody,
  response: MessageObject,
  serializedBySchema: false,
  run: (services, caller, body, context) => services.messages.create(caller, body, context),
  stream: {
    requested: streamsWhenAsked,
    open: (services, caller, body, context) => services.messages.open(caller, body, context),
    framing: 'named',
    event: MessageStreamEvent,
    description: 'server-sent events, each `event: <type>` and `data: <event JSON>`: message_start, content blocks, message_delta, message_stop; no `[DONE]`',
    carriesUsage: (event) => event.type === 'message_delta',
  },
  gateway: true,
  labels: anthropicLabels,
  batch: { serves: (model) => model.entry.routes.includes('chat') },
  errors: ANTHROPIC_ERRORS,
  headers: ANTHROPIC_HEADERS,
};

export const countTokensWire: WireFormat<CountTokensRequestBody> = {
  path: '/messages/count_tokens',
  summary: 'Count the input tokens of a message (Anthropic Messages API); free, and never recorded as usage',
  body: CountTokensBody,
  response: TokenCountObject,
  serializedBySchema: false,
  run: (services, caller, body, context) => services.messages.countTokens(caller, body, context),
  gateway: true,
  errors: ANTHROPIC_ERRORS,
  headers: ANTHROPIC_HEADERS,
};

/** Both routes of the wire, in the order they are mounted. */
export const MESSAGES_WIRES: readonly WireFormat[] = [messagesWire, countTokensWire] as readonly WireFormat[];

/** The Responses wire (`POST /v1/responses`): JSON, or with `stream: true` named events, each with a sequence_number. */
import { streamsWhenAsked, type WireFormat } from '../wire-format.js';
import { ResponsesBody, type ResponsesRequestBody } from './body.js';
import { RESPONSES_ERRORS } from './errors.js';
import { ResponseObject, ResponseStreamEvent } from './response.js';
import { responsesRequestOf } from './mapper.js';
import { responsesSocket } from './socket.js';
import { openAiLabels } from '../call-labels.js';

/** The events that end a response, each carrying it whole, its usage included. */
const FINAL_EVENTS: ReadonlySet<unknown> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export const responsesWire: WireFormat<ResponsesRequestBody> = {
  path: '/responses',
  summary: 'Create a model response (OpenAI Responses shape; `stream: true` for SSE)',
  body: ResponsesBody,
  response: ResponseObject,
  serializedBySchema: false,
  run: (services, caller, body, context) => services.responses.create(caller, responsesRequestOf(body, context.sessionId), context),
  stream: {
    requested: streamsWhenAsked,
    open: (services, caller, body, context) => services.responses.open(caller, responsesRequestOf(body, context.sessionId), context),
    framing: 'named',
    event: ResponseStreamEvent,
    description: 'server-sent events, each `event: <type>` and `data: <ResponseStreamEvent JSON>`, numbered by `sequence_number`; no `[DONE]`',
    carriesUsage: (event) => FINAL_EVENTS.has(event.type),
  },
  socket: responsesSocket,
  gateway: true,
  labels: openAiLabels,
  batch: { serves: (model) => model.entry.routes.includes('responses') },
  // OpenAI's envelope, under this wire's name: a scope may answer this wire's errors its own way (the gateway's failed Responses object).
  errors: RESPONSES_ERRORS,
};

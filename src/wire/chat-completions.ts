/**
 * The body of POST /v1/chat/completions (and of a batch line on that endpoint): the one
 * definition the route and the batch runner validate against, and the typed value the
 * domain receives. Properties are declared in the order a single fault is named.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  JsonBody,
  OptionalBoolean,
  OptionalInteger,
  OptionalLabels,
  OptionalNumber,
  OptionalObject,
  OptionalShape,
  OptionalString,
  Refused,
  RequiredString,
  typed,
} from './fields.js';

export type ChatRoleIn = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPartIn {
  type: 'text' | 'input_text' | 'output_text';
  text: string;
}

export interface ChatMessageIn {
  role: ChatRoleIn;
  content: string | TextPartIn[];
  name?: string | null;
  tool_call_id?: string | null;
}

const ONLY_TEXT = '{param} must be "text"; only text content is supported';

const PartType = typed('string', { enum: ['text', 'input_text', 'output_text'] }, { default: ONLY_TEXT, missing: ONLY_TEXT });

/**
 * The part's type is checked first (in allOf, which Ajv runs before `required`); the allOf
 * branch has no `type` of its own, so a part that is not an object fails on the outer one.
 */
const TextPart = typed<TextPartIn>(
  'object',
  {
    allOf: [{ required: ['type'], properties: { type: PartType } }],
    required: ['text'],
    properties: { type: PartType, text: typed('string', {}, { default: '{param} must be a string', missing: '{param} must be a string' }) },
  },
  { type: '{param} must be an object' },
);

/** A string, or text parts joined with newlines. */
export const MessageContent = typed<string | TextPartIn[]>(
  ['string', 'array'],
  { minLength: 1, minItems: 1, items: TextPart, description: 'a string, or an array of text parts' },
  {
    minLength: '{param} must be a non-empty string',
    default: '{param} must be a non-empty string or an array of text parts',
    null: '{param} is required',
  },
);

export const messageProperties = {
  role: typed<ChatRoleIn>(
    'string',
    { enum: ['system', 'developer', 'user', 'assistant', 'tool'], description: 'developer is read as system' },
    { default: '{param} must be one of system, user, assistant, tool, developer', null: '{param} is required' },
  ),
  content: MessageContent,
  name: OptionalString(),
  tool_call_id: OptionalString(),
};

export const MESSAGE_WORDING = { type: '{param} must be an object with role and content, got {got}' };

const ChatMessage = typed<ChatMessageIn>('object', { required: ['role', 'content'], properties: messageProperties }, MESSAGE_WORDING);

export const ChatCompletionBody = JsonBody(
  {
    model: RequiredString({ description: 'a model id from GET /v1/models' }),
    messages: typed<ChatMessageIn[]>('array', { minItems: 1, items: ChatMessage }, { default: '{param} must be a non-empty array', null: '{param} is required' }),
    n: OptionalInteger(1, { maximum: 1, description: 'only 1 is supported' }, { maximum: 'n must be 1; only one choice per request is supported' }),
    tools: Refused({ type: 'array', minItems: 1 }, 'tools are not supported', { description: 'not supported; an empty list is accepted' }),
    stream: OptionalBoolean({ description: 'true: server-sent events of chat.completion.chunk objects' }),
    stream_options: OptionalShape<{ include_usage?: boolean | null }>({ properties: { include_usage: OptionalBoolean() } }),
    metadata: OptionalObject({ description: 'model options, passed to the model (e.g. multi_label for zero-shot models)' }),
    temperature: OptionalNumber(0, 2),
    top_p: OptionalNumber(0, 1),
    presence_penalty: OptionalNumber(-2, 2),
    frequency_penalty: OptionalNumber(-2, 2),
    max_tokens: OptionalInteger(1),
    max_completion_tokens: OptionalInteger(1),
    seed: OptionalInteger(Number.MIN_SAFE_INTEGER),
    reasoning_effort: OptionalString(),
    response_format: OptionalObject(),
    stop: Type.Optional(
      typed<string | string[] | null>(
        ['string', 'array', 'null'],
        { maxItems: 4, items: typed('string', {}, { default: 'stop must be a string or an array of at most 4 strings', param: 'stop' }) },
        { default: 'stop must be a string or an array of at most 4 strings' },
      ),
    ),
    categories: OptionalLabels(),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

export type ChatCompletionRequestBody = Static<typeof ChatCompletionBody>;

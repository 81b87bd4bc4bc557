/**
 * POST /v1/chat/completions: the request body, in the order and wording of
 * `domain/inference/chat-request.ts`, and the `chat.completion` object (OpenAI's shape) as
 * a response schema: documentation, and Fastify compiles it into a serializer for the
 * route, faster than JSON.stringify on an answer written on every call. Every field the
 * service sets must be listed there, or it would be dropped from the wire.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import {
  JsonBody,
  OptionalBoolean,
  OptionalInteger,
  OptionalLabels,
  OptionalNumber,
  OptionalObject,
  OptionalString,
  Refused,
  RequiredString,
  typed,
} from './fields.js';

const ONLY_TEXT = '{param} must be "text"; only text content is supported';

const PartType = typed('string', { enum: ['text', 'input_text', 'output_text'] }, { default: ONLY_TEXT, missing: ONLY_TEXT });

/**
 * The part's type is checked first (in allOf, which Ajv runs before `required`), as the
 * domain does; the allOf branch has no `type` of its own, so a part that is not an object
 * fails on the outer one.
 */
const TextPart = typed(
  'object',
  {
    allOf: [{ required: ['type'], properties: { type: PartType } }],
    required: ['text'],
    properties: { type: PartType, text: typed('string', {}, { default: '{param} must be a string', missing: '{param} must be a string' }) },
  },
  { type: '{param} must be an object' },
);

/** A string, or text parts joined with newlines. */
export const MessageContent = typed(
  ['string', 'array'],
  { minLength: 1, minItems: 1, items: TextPart, description: 'a string, or an array of text parts' },
  {
    minLength: '{param} must be a non-empty string',
    default: '{param} must be a non-empty string or an array of text parts',
    null: '{param} is required',
  },
);

export const messageProperties = {
  role: typed(
    'string',
    { enum: ['system', 'developer', 'user', 'assistant', 'tool'], description: 'developer is read as system' },
    { default: '{param} must be one of system, user, assistant, tool, developer', null: '{param} is required' },
  ),
  content: MessageContent,
  name: OptionalString(),
  tool_call_id: OptionalString(),
};

export const MESSAGE_WORDING = { type: '{param} must be an object with role and content, got {got}' };

const ChatMessageIn = typed('object', { required: ['role', 'content'], properties: messageProperties }, MESSAGE_WORDING);

/** Properties in the order the domain reads them, so a single fault is named as it would name it. */
export const ChatCompletionBody = JsonBody(
  {
    model: RequiredString({ description: 'a model id from GET /v1/models' }),
    messages: typed('array', { minItems: 1, items: ChatMessageIn }, { default: '{param} must be a non-empty array', null: '{param} is required' }),
    n: OptionalInteger(1, { maximum: 1, description: 'only 1 is supported' }, { maximum: 'n must be 1; only one choice per request is supported' }),
    tools: Refused({ type: 'array', minItems: 1 }, 'tools are not supported', { description: 'not supported; an empty list is accepted' }),
    stream: OptionalBoolean({ description: 'true: server-sent events of chat.completion.chunk objects' }),
    stream_options: OptionalObject({ properties: { include_usage: OptionalBoolean() } }),
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
      typed(
        ['string', 'array', 'null'],
        { maxItems: 4, items: typed('string', {}, { default: 'stop must be a string or an array of at most 4 strings', param: 'stop' }) },
        { default: 'stop must be a string or an array of at most 4 strings' },
      ),
    ),
    categories: OptionalLabels(),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

/** `type: [T, 'null']` rather than anyOf, which the compiled serializer would have to test value by value. */
const OrNull = <T extends TSchema>(schema: T) => Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type as string, 'null'] });

const Integer = Type.Integer();

const ChatMessage = Type.Object({
  role: Type.Literal('assistant'),
  content: OrNull(Type.String({ description: 'for classification models, the JSON-stringified result' })),
  refusal: OrNull(Type.String()),
  annotations: Type.Array(Type.Unknown()),
  reasoning: Type.Optional(Type.String({ description: 'present when the model produced reasoning' })),
});

/** Tokens of a chat completion (and of the last chunk of a stream that asked for usage). */
export const ChatUsage = Type.Object({
  prompt_tokens: Integer,
  completion_tokens: Integer,
  total_tokens: Integer,
  prompt_tokens_details: Type.Object({ cached_tokens: Integer, audio_tokens: Integer }),
  completion_tokens_details: Type.Object({
    reasoning_tokens: Integer,
    audio_tokens: Integer,
    accepted_prediction_tokens: Integer,
    rejected_prediction_tokens: Integer,
  }),
});

export const ChatCompletionObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer({ description: 'Unix timestamp, seconds' }),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Integer,
      message: ChatMessage,
      logprobs: Type.Null(),
      finish_reason: Type.String(),
    }),
  ),
  usage: ChatUsage,
  system_fingerprint: OrNull(Type.String()),
  service_tier: Type.String(),
});

/** One server-sent event of a streamed chat completion (`data: {...}`); the stream ends with `data: [DONE]`. */
export const ChatCompletionChunk = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion.chunk'),
  created: Type.Integer({ description: 'Unix timestamp, seconds' }),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Integer,
      delta: Type.Object({
        role: Type.Optional(Type.Literal('assistant')),
        content: Type.Optional(OrNull(Type.String())),
        reasoning: Type.Optional(Type.String({ description: 'present when the model reasons' })),
      }),
      logprobs: Type.Null(),
      finish_reason: OrNull(Type.String()),
    }),
  ),
  // Present only when the request set stream_options.include_usage: null on every chunk but the last.
  usage: Type.Optional(OrNull(ChatUsage)),
  system_fingerprint: OrNull(Type.String()),
  service_tier: Type.String(),
});

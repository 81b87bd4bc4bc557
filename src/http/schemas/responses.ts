/** POST /v1/responses: the request body in the order and wording of `domain/inference/responses-request.ts`, and the response object. */
import { Type } from '@sinclair/typebox';
import { MESSAGE_WORDING, messageProperties } from './chat-completions.js';
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

const ItemType = typed('string', { const: 'message' }, { default: '{param} must be "message"; only message items are supported' });

/** A message item; its `type` is checked first (in allOf, which Ajv runs before `required`; see TextPart), as the domain does. */
const InputItem = typed(
  'object',
  {
    allOf: [{ properties: { type: ItemType } }],
    required: ['role', 'content'],
    properties: { type: Type.Optional(ItemType), ...messageProperties },
  },
  MESSAGE_WORDING,
);

export const ResponsesBody = JsonBody(
  {
    model: RequiredString({ description: 'a model id from GET /v1/models' }),
    input: typed(
      ['string', 'array'],
      { minLength: 1, minItems: 1, items: InputItem, description: 'a string (one user message) or a list of messages' },
      { default: 'input must be a non-empty string or a list of messages', null: 'input is required' },
    ),
    stream: Refused({ const: true }, 'stream is not supported on /v1/responses; use /v1/chat/completions to stream', {
      description: 'not supported; stream with /v1/chat/completions',
    }),
    previous_response_id: Type.Optional(
      typed('null', { description: 'not supported: responses are not stored' }, {
        default: 'previous_response_id is not supported: responses are not stored; send the whole conversation as input',
      }),
    ),
    tools: Refused({ type: 'array', minItems: 1 }, 'tools are not supported', { description: 'not supported; an empty list is accepted' }),
    text: OptionalObject({
      properties: {
        format: OptionalObject({
          properties: {
            type: OptionalString({ enum: ['text', null] }, { enum: '{param} "{value}" is not supported; only "text" is' }),
          },
        }),
      },
    }),
    instructions: OptionalString({ description: 'a leading system message; for zero-shot models, the candidate labels' }),
    max_output_tokens: OptionalInteger(1),
    // Not typed: the domain reads it only when max_output_tokens is absent, and ignores it otherwise.
    max_tokens: Type.Optional(Type.Unsafe<unknown>({ description: 'an integer of at least 1, read when max_output_tokens is absent' })),
    truncation: OptionalString({ enum: ['auto', 'disabled', null] }, { enum: 'truncation must be "auto" or "disabled"' }),
    reasoning: OptionalObject({ properties: { effort: OptionalString() } }),
    temperature: OptionalNumber(0, 2),
    top_p: OptionalNumber(0, 1),
    store: OptionalBoolean({ description: 'echoed; responses are never stored' }),
    parallel_tool_calls: OptionalBoolean(),
    user: OptionalString(),
    metadata: OptionalObject({ description: 'echoed, and passed to the model as options' }),
    categories: OptionalLabels(),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

const Nullable = (type: string, doc: Record<string, unknown> = {}) => typed([type, 'null'], doc);

const OutputItem = Type.Object({
  type: Type.String({ description: '`reasoning` (first, when the model reasoned) or `message`' }),
  id: Type.String(),
  status: Type.Optional(Type.String()),
  role: Type.Optional(Type.Literal('assistant')),
  content: Type.Array(Type.Object({ type: Type.String(), text: Type.String(), annotations: Type.Optional(Type.Array(Type.Unknown())) })),
  summary: Type.Optional(Type.Array(Type.Unknown())),
});

export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer({ description: 'Unix timestamp, seconds' }),
  status: Type.String({ description: '`completed`, or `incomplete` when max_output_tokens cut it short' }),
  completed_at: Nullable('integer'),
  error: Type.Null(),
  incomplete_details: Nullable('object'),
  instructions: Nullable('string'),
  max_output_tokens: Nullable('integer'),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Type.Null(),
  reasoning: Type.Object({ effort: Nullable('string'), summary: Type.Null() }),
  store: Type.Boolean(),
  temperature: Type.Number(),
  text: Type.Object({ format: Type.Object({ type: Type.Literal('text') }) }),
  tool_choice: Type.String(),
  tools: Type.Array(Type.Unknown()),
  top_p: Type.Number(),
  truncation: Type.String(),
  usage: Type.Object({
    input_tokens: Type.Integer(),
    input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
    output_tokens: Type.Integer(),
    output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
    total_tokens: Type.Integer(),
  }),
  user: Nullable('string'),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

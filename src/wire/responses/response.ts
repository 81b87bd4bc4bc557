/**
 * The response object of POST /v1/responses (every field of Open Responses'
 * ResponseResource) and its stream events; the request body is body.ts, beside it.
 */
import { Type } from '@sinclair/typebox';
import { typed } from '../fields.js';

const Nullable = (type: string, doc: Record<string, unknown> = {}) => typed([type, 'null'], doc);

const ContentPart = Type.Object(
  {
    type: Type.String({ description: '`output_text`, `refusal`, or `reasoning_text` (in a reasoning item)' }),
    text: Type.Optional(Type.String()),
    refusal: Type.Optional(Type.String()),
    annotations: Type.Optional(Type.Array(Type.Unknown())),
    logprobs: Type.Optional(Type.Array(Type.Unknown(), { description: "the engine's token logprobs, when top_logprobs asked for them" })),
  },
  { additionalProperties: true },
);

const OutputItem = Type.Object(
  {
    type: Type.String({ description: '`reasoning` (first, when the model reasoned), `message`, or `function_call`' }),
    id: Type.String(),
    status: Type.Optional(Type.String({ description: 'in_progress, completed or incomplete' })),
    role: Type.Optional(Type.Literal('assistant')),
    content: Type.Optional(Type.Array(ContentPart)),
    summary: Type.Optional(Type.Array(Type.Unknown())),
    call_id: Type.Optional(Type.String({ description: 'function_call: the id a function_call_output answers' })),
    name: Type.Optional(Type.String({ description: 'function_call: the function' })),
    namespace: Type.Optional(Type.String({ description: 'function_call: the namespace tool the function belongs to' })),
    encrypted_content: Type.Optional(Type.String({ description: 'reasoning: its text sealed by the server, when include asked for reasoning.encrypted_content' })),
    arguments: Type.Optional(Type.String({ description: 'function_call: the arguments, JSON text' })),
  },
  { additionalProperties: true },
);

const FunctionTool = Type.Object({
  type: Type.Literal('function'),
  name: Type.String(),
  description: Nullable('string'),
  parameters: Nullable('object'),
  strict: Nullable('boolean'),
});

/** A function tool, or a namespace of them as sent (hosted tools are dropped, never listed). */
const Tool = Type.Union([
  FunctionTool,
  Type.Object({ type: Type.Literal('namespace'), name: Type.String(), description: Nullable('string'), tools: Type.Array(FunctionTool) }),
]);

export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer({ description: 'Unix timestamp, seconds' }),
  status: Type.String({ description: '`completed`; `incomplete` when max_output_tokens cut it short; `failed` with `error`; `in_progress` on stream events before the end; a background response is `queued`, then `in_progress`, and may end `cancelled`' }),
  completed_at: Nullable('integer'),
  error: Type.Union([Type.Null(), Type.Object({ message: Type.String(), type: Type.String(), param: Nullable('string'), code: Nullable('string') })]),
  incomplete_details: Nullable('object', { description: '{reason: max_output_tokens | content_filter}' }),
  instructions: Nullable('string'),
  max_output_tokens: Nullable('integer'),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Nullable('string'),
  reasoning: Type.Object({ effort: Nullable('string'), summary: Nullable('string') }),
  store: Type.Boolean(),
  temperature: Type.Number(),
  text: Type.Object({ format: Type.Object({ type: Type.String({ description: 'text, json_object or json_schema (with name, schema, strict)' }) }, { additionalProperties: true }) }, { additionalProperties: true }),
  tool_choice: Type.Union([Type.String(), Type.Object({ type: Type.Literal('function'), name: Type.String() })]),
  tools: Type.Array(Tool),
  top_p: Type.Number(),
  truncation: Type.String(),
  usage: Type.Union([
    Type.Null(),
    Type.Object({
      input_tokens: Type.Integer(),
      input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
      output_tokens: Type.Integer(),
      output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
      total_tokens: Type.Integer(),
    }),
  ]),
  user: Nullable('string'),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  background: Type.Boolean({ description: 'true for a response created with background: true' }),
  conversation: Type.Null(),
  frequency_penalty: Type.Number(),
  presence_penalty: Type.Number(),
  top_logprobs: Type.Integer(),
  max_tool_calls: Nullable('integer'),
  service_tier: Type.String(),
  safety_identifier: Nullable('string'),
  prompt_cache_key: Nullable('string'),
});

/** One event of a streamed response (`stream: true`): the SSE event name is its `type`. */
export const ResponseStreamEvent = Type.Object(
  {
    type: Type.String({
      description:
        'response.created, response.in_progress; response.output_item.added, response.content_part.added, response.output_text.delta, ' +
        'response.output_text.done, response.content_part.done, response.output_item.done; response.refusal.delta/.done; ' +
        'response.reasoning_text.delta/.done; response.function_call_arguments.delta/.done; then response.completed, ' +
        'response.incomplete, or error and response.failed',
    }),
    sequence_number: Type.Integer({ description: 'from 0, one more on each event' }),
    response: Type.Optional(ResponseObject),
    output_index: Type.Optional(Type.Integer()),
    item: Type.Optional(OutputItem),
    item_id: Type.Optional(Type.String()),
    content_index: Type.Optional(Type.Integer()),
    part: Type.Optional(ContentPart),
    delta: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    arguments: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** The response object of POST /v1/responses; the request body is src/wire/responses.ts. */
import { Type } from '@sinclair/typebox';
import { typed } from '../../wire/fields.js';

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

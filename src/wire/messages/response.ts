/**
 * The answers of POST /v1/messages (Anthropic's Message object and its stream events) and
 * of POST /v1/messages/count_tokens, as response schemas for the OpenAPI document. The
 * request bodies are body.ts, beside it.
 */
import { Type } from '@sinclair/typebox';

const Usage = Type.Object({
  input_tokens: Type.Integer({ description: 'input tokens neither read from nor written to the engine\'s prompt cache' }),
  output_tokens: Type.Integer(),
  cache_creation_input_tokens: Type.Integer({ description: 'written to the engine\'s prompt cache, when the engine reports it' }),
  cache_read_input_tokens: Type.Integer({ description: 'read from the engine\'s prompt cache, when the engine reports it' }),
});

const ContentBlock = Type.Object(
  {
    type: Type.String({ description: '`thinking` (with a signature Sluice verifies when it comes back), `text`, or `tool_use`' }),
    text: Type.Optional(Type.String()),
    thinking: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);

export const MessageObject = Type.Object({
  id: Type.String({ description: '`msg_…`' }),
  type: Type.Literal('message'),
  role: Type.Literal('assistant'),
  model: Type.String({ description: 'the model asked for' }),
  content: Type.Array(ContentBlock),
  stop_reason: Type.String({ description: 'end_turn, max_tokens, stop_sequence, tool_use or refusal' }),
  stop_sequence: Type.Union([Type.String(), Type.Null()], { description: 'the stop sequence that ended the answer, with stop_reason stop_sequence' }),
  usage: Usage,
});

export const MessageStreamEvent = Type.Object(
  {
    type: Type.String({
      description:
        'message_start (the message, its input usage counted), ping, then per block content_block_start, content_block_delta ' +
        '(text_delta, thinking_delta, signature_delta, input_json_delta) and content_block_stop, then message_delta ' +
        '(stop_reason, stop_sequence, usage) and message_stop; a stream cut after it started ends with an `error` event instead',
    }),
    index: Type.Optional(Type.Integer()),
    message: Type.Optional(Type.Unknown()),
    content_block: Type.Optional(ContentBlock),
    delta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    usage: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const TokenCountObject = Type.Object({ input_tokens: Type.Integer({ description: 'the system prompt, messages and tools as the model reads them' }) });

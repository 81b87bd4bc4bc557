/**
 * The `chat.completion` object (OpenAI's shape) and its stream chunk, as response schemas:
 * documentation, and Fastify compiles the object into a serializer for the route, faster
 * than JSON.stringify on an answer written on every call. Every field the service sets
 * must be listed there, or it would be dropped from the wire. The request body is
 * body.ts, beside it.
 */
import { Type, type TSchema } from '@sinclair/typebox';

/** `type: [T, 'null']` rather than anyOf, which the compiled serializer would have to test value by value. */
const OrNull = <T extends TSchema>(schema: T) => Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type as string, 'null'] });

const Integer = Type.Integer();

/** An engine's other fields (audio, reasoning_content, …) are carried too: `additionalProperties`, which the serializer writes as sent. */
const Carried = { additionalProperties: true };

const ToolCalls = Type.Optional(
  Type.Array(Type.Unknown(), { description: 'function calls the model asked for (`id`, `type: function`, `function: {name, arguments}`)' }),
);

const ChatMessage = Type.Object(
  {
    role: Type.Literal('assistant'),
    content: OrNull(Type.String({ description: 'for classification models, the JSON-stringified result; null beside tool calls' })),
    refusal: OrNull(Type.String()),
    annotations: Type.Array(Type.Unknown()),
    reasoning: Type.Optional(Type.String({ description: 'present when the model produced reasoning' })),
    tool_calls: ToolCalls,
  },
  Carried,
);

const Logprobs = Type.Unknown({ description: 'null, or `{content: [{token, logprob, top_logprobs}]}` when the request set logprobs' });

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

export const ChatCompletionObject = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer({ description: 'Unix timestamp, seconds' }),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        {
          index: Integer,
          message: ChatMessage,
          logprobs: Logprobs,
          finish_reason: Type.String({ description: 'stop, length, tool_calls, content_filter' }),
        },
        Carried,
      ),
      { description: 'one per `n`' },
    ),
    usage: ChatUsage,
    system_fingerprint: OrNull(Type.String()),
    service_tier: Type.String(),
  },
  Carried,
);

/** One server-sent event of a streamed chat completion (`data: {...}`); the stream ends with `data: [DONE]`. */
export const ChatCompletionChunk = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion.chunk'),
    created: Type.Integer({ description: 'Unix timestamp, seconds' }),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        {
          index: Integer,
          delta: Type.Object(
            {
              role: Type.Optional(Type.Literal('assistant')),
              content: Type.Optional(OrNull(Type.String())),
              reasoning: Type.Optional(Type.String({ description: 'present when the model reasons' })),
              tool_calls: Type.Optional(
                Type.Array(Type.Unknown(), { description: 'tool-call deltas, each with its `index`; the first of a call carries its id and name' }),
              ),
            },
            Carried,
          ),
          logprobs: Logprobs,
          finish_reason: OrNull(Type.String()),
        },
        Carried,
      ),
    ),
    // Present only when the request set stream_options.include_usage: null on every chunk but the last.
    usage: Type.Optional(OrNull(ChatUsage)),
    system_fingerprint: OrNull(Type.String()),
    service_tier: Type.String(),
  },
  Carried,
);

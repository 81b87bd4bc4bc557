/** The `text_completion` object of POST /v1/completions and its stream chunk; the request body is body.ts, beside it. */
import { Type } from '@sinclair/typebox';

/** An engine's other fields are carried too: `additionalProperties`, which the serializer writes as sent. */
const Carried = { additionalProperties: true };

const Choice = Type.Object(
  {
    index: Type.Integer(),
    text: Type.String(),
    logprobs: Type.Unknown({ description: 'null, or the engine’s tokens, token_logprobs, top_logprobs and text_offset' }),
    finish_reason: Type.Unknown({ description: 'stop or length; null on a stream chunk before the end' }),
  },
  Carried,
);


export const TextCompletion = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('text_completion'),
    created: Type.Integer({ description: 'Unix timestamp, seconds' }),
    model: Type.String(),
    choices: Type.Array(Choice, { description: 'one per prompt and `n`, as the engine sent them' }),
    system_fingerprint: Type.Unknown(),
    usage: Type.Optional(Type.Unknown({ description: 'prompt_tokens, completion_tokens, total_tokens; on a stream, null until the last chunk when include_usage is set' })),
  },
  Carried,
);


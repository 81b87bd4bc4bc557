/** POST /v1/embeddings: the request body in the order and wording of `domain/inference/embeddings.service.ts`, and the list of vectors. */
import { Type } from '@sinclair/typebox';
import { JsonBody, OptionalInteger, OptionalString, RequiredString, typed } from './fields.js';

export const EmbeddingsBody = JsonBody(
  {
    model: RequiredString({ description: 'an embeddings model id from GET /v1/models' }),
    input: typed(
      ['string', 'array'],
      {
        minLength: 1,
        minItems: 1,
        maxItems: 2048,
        items: typed('string', { minLength: 1 }, { default: '{param} must be a non-empty string' }),
        description: 'a string, or up to 2048 strings (one vector each, in order)',
      },
      {
        default: 'input must be a non-empty string or an array of non-empty strings',
        maxItems: 'input must have at most 2048 elements',
        null: 'input is required',
      },
    ),
    encoding_format: OptionalString(
      { enum: ['float', 'base64', null], description: '`float` (default): JSON numbers; `base64`: little-endian float32 bytes' },
      { enum: 'encoding_format must be "float" or "base64"' },
    ),
    dimensions: OptionalInteger(1, { description: "must equal the model's own dimensions when sent" }),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

export const EmbeddingList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer(),
      embedding: typed(['array', 'string'], {
        items: { type: 'number' },
        description: 'numbers, or a base64 string with encoding_format base64',
      }),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});

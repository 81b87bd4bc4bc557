/** The body of POST /v1/embeddings: the one definition the route validates against, and the typed value the domain receives. */
import type { Static } from '@sinclair/typebox';
import { JsonBody, OptionalInteger, OptionalString, RequiredString, typed } from '../fields.js';

export const MAX_EMBEDDING_INPUTS = 2048;

export const EmbeddingsBody = JsonBody(
  {
    model: RequiredString({ description: 'an embeddings model id from GET /v1/models' }),
    input: typed<string | string[]>(
      ['string', 'array'],
      {
        minLength: 1,
        minItems: 1,
        maxItems: MAX_EMBEDDING_INPUTS,
        items: typed('string', { minLength: 1 }, { default: '{param} must be a non-empty string' }),
        description: `a string, or up to ${MAX_EMBEDDING_INPUTS} strings (one vector each, in order)`,
      },
      {
        default: 'input must be a non-empty string or an array of non-empty strings',
        maxItems: `input must have at most ${MAX_EMBEDDING_INPUTS} elements`,
        null: 'input is required',
      },
    ),
    encoding_format: OptionalString<'float' | 'base64'>(
      { enum: ['float', 'base64', null], description: '`float` (default): JSON numbers; `base64`: little-endian float32 bytes' },
      { enum: 'encoding_format must be "float" or "base64"' },
    ),
    dimensions: OptionalInteger(1, { description: "must equal the model's own dimensions when sent" }),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

export type EmbeddingsRequestBody = Static<typeof EmbeddingsBody>;

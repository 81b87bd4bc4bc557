/** The list of vectors POST /v1/embeddings answers; the request body is body.ts, beside it. */
import { Type } from '@sinclair/typebox';
import { typed } from '../fields.js';

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

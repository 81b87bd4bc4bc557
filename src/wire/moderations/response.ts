/** The results POST /v1/moderations answers; the request body is body.ts, beside it. */
import { Type } from '@sinclair/typebox';

export const ModerationResponse = Type.Object({
  id: Type.String(),
  model: Type.String(),
  results: Type.Array(
    Type.Object({
      flagged: Type.Boolean(),
      categories: Type.Record(Type.String(), Type.Boolean(), { description: 'the 13 categories, in OpenAI order' }),
      category_scores: Type.Record(Type.String(), Type.Number()),
      category_applied_input_types: Type.Record(Type.String(), Type.Array(Type.String())),
    }),
  ),
});

/**
 * POST /v1/moderations: the request body in the order and wording of
 * `domain/inference/moderations.service.ts`, and the results. The elements of an `input`
 * list are left to the service: whether they must be strings or text parts depends on
 * the first one, which a schema cannot say with the service's messages.
 */
import { Type } from '@sinclair/typebox';
import { JsonBody, OptionalObject, OptionalString, typed } from './fields.js';

const BAD_INPUT = 'input must be a non-empty string, an array of non-empty strings, or an array of text parts';

export const ModerationsBody = JsonBody(
  {
    model: OptionalString(
      { minLength: 1, description: 'default zlm-v1-moderation-edge; OpenAI moderation model ids map to it' },
      { minLength: '{param} must be a non-empty string' },
    ),
    input: typed(
      ['string', 'array'],
      {
        minLength: 1,
        minItems: 1,
        items: { description: 'non-empty strings (one result each), or text parts {"type": "text", "text"} (one result together)' },
      },
      { default: BAD_INPUT, null: 'input is required' },
    ),
    metadata: OptionalObject({ description: 'model options, passed to the model' }),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

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

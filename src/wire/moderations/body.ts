/**
 * The body of POST /v1/moderations: the one definition the route validates against, and
 * the typed value the domain receives. `input` is a string, non-empty strings (one result
 * each) or text parts (one input together); its first element decides which.
 */
import type { Static } from '@sinclair/typebox';
import { JsonBody, OptionalObject, OptionalString, typed } from '../fields.js';

export interface ModerationTextPartIn {
  type: 'text';
  text: string;
}

const BAD_INPUT = 'input must be a non-empty string, an array of non-empty strings, or an array of text parts';

const PartType = typed('string', { const: 'text' }, {
  default: '{param} must be "text"; only text is supported',
  missing: '{param} must be "text"; only text is supported',
});

/** Its type is checked before its text (in allOf, which Ajv runs before `required`). */
const TextPart = typed<ModerationTextPartIn>(
  'object',
  {
    allOf: [{ required: ['type'], properties: { type: PartType } }],
    required: ['text'],
    properties: {
      type: PartType,
      text: typed('string', { minLength: 1 }, { default: '{param} must be a non-empty string', missing: '{param} must be a non-empty string' }),
    },
  },
  { type: '{param} must be a text part {type: "text", text}, got {got}' },
);

const NonEmptyString = typed('string', { minLength: 1 }, { default: '{param} must be a non-empty string' });

export const ModerationsBody = JsonBody(
  {
    model: OptionalString(
      { minLength: 1, description: 'default zlm-v1-moderation-edge; OpenAI moderation model ids map to it' },
      { minLength: '{param} must be a non-empty string' },
    ),
    input: typed<string | string[] | ModerationTextPartIn[]>(
      ['string', 'array'],
      {
        minLength: 1,
        minItems: 1,
        if: { type: 'array', minItems: 1, items: [{ type: 'string' }] },
        then: { items: NonEmptyString },
        else: { items: TextPart },
        description: 'non-empty strings (one result each), or text parts {"type": "text", "text"} (one result together)',
      },
      { default: BAD_INPUT, null: 'input is required' },
    ),
    metadata: OptionalObject({ description: 'model options, passed to the model' }),
  },
  { description: 'Other OpenAI fields are accepted and ignored.' },
);

export type ModerationsRequestBody = Static<typeof ModerationsBody>;

/**
 * The body of POST /v1/completions (the legacy text route): the one definition the route
 * validates against, and the typed value the domain receives. Sluice reads the model,
 * the prompt, the stream flags, the caps and `n`; every other field (suffix, echo,
 * logprobs, best_of, stop, ...) is carried to the engine unchanged.
 */
import { Type, type Static } from '@sinclair/typebox';
import { JsonBody, OptionalBoolean, OptionalInteger, OptionalShape, RequiredString, typed } from '../fields.js';

/** A string, strings, a token list, or token lists (one completion each). */
export type PromptIn = string | string[] | number[] | number[][];

const PROMPT_WORDING = 'prompt must be a string, an array of strings, or an array of tokens';

export const CompletionBody = JsonBody(
  {
    model: RequiredString({ description: 'a chat model served by an upstream engine (GET /v1/models)' }),
    prompt: typed<PromptIn>(
      ['string', 'array'],
      {
        minItems: 1,
        items: typed(['string', 'integer', 'array'], { items: { type: 'integer' } }, { default: PROMPT_WORDING, param: 'prompt' }),
        description: 'a string, an array of strings, or token ids (an array, or arrays of them)',
      },
      { default: PROMPT_WORDING, null: 'prompt is required' },
    ),
    n: OptionalInteger(1, { maximum: 128, description: 'completions per prompt; each is held for the output cap' }, {
      maximum: 'n must be an integer between 1 and 128',
    }),
    stream: OptionalBoolean({ description: 'true: server-sent events of text_completion objects' }),
    stream_options: OptionalShape<{ include_usage?: boolean | null }>({ properties: { include_usage: OptionalBoolean() } }),
    max_tokens: OptionalInteger(1),
    suffix: Type.Optional(typed<string | null>(['string', 'null'], { description: 'carried to the engine' }, { type: '{param} must be a string, got {got}' })),
    echo: OptionalBoolean({ description: 'carried to the engine' }),
    logprobs: OptionalInteger(0, { maximum: 5, description: 'carried to the engine' }, { default: 'logprobs must be an integer between 0 and 5' }),
  },
  { description: 'Other fields (temperature, stop, best_of, seed, logit_bias, ...) are carried to the engine unchanged.' },
);

export type CompletionRequestBody = Static<typeof CompletionBody>;

/**
 * POST /v1/systemone: the System One request and answers, for the OpenAPI document only.
 * The body is read by `domain/decision/validation.ts`, which lists every failure in
 * FastAPI's 422 shape (Ajv would stop at the first and word it its own way).
 */
import { Type } from '@sinclair/typebox';

const FreeText = Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())], {
  description: 'free-form text: a string, or an object or array read as its JSON',
});
const Instructions = Type.Optional(Type.Union([FreeText, Type.Null()]));

const NoulQuestion = Type.Object({
  type: Type.Literal('noul'),
  instructions: Instructions,
  criteria: Type.Optional(
    Type.Union([Type.Object({ true: Type.Optional(Type.Union([FreeText, Type.Null()])), false: Type.Optional(Type.Union([FreeText, Type.Null()])) }), Type.Null()]),
  ),
});
const ChoiceQuestion = Type.Object({
  type: Type.Literal('choice'),
  instructions: Instructions,
  criteria: Type.Record(Type.String(), Type.Union([FreeText, Type.Null()]), {
    minProperties: 1,
    maxProperties: 32,
    description: 'choice name → description; null: the name alone',
  }),
});
const ScoreQuestion = Type.Object({
  type: Type.Literal('score'),
  instructions: Instructions,
  criteria: Type.Array(FreeText, { minItems: 1, maxItems: 32, description: 'levels, low end first; a level’s index is its score' }),
});

export const DecisionBody = Type.Object({
  model: Type.String({
    description: 'zlm-v1-moderation-edge, zlm-v1-iab-classify-edge, zlm-v1-iab-domain-classifier or zlm-v2-iab-classify-edge-enriched; jev-latest maps to the configured default',
  }),
  state: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())], {
    description: 'the content every question refers to; for zlm-v1-iab-domain-classifier a URL or domain',
  }),
  questions: Type.Record(Type.String(), Type.Union([NoulQuestion, ChoiceQuestion, ScoreQuestion]), { minProperties: 1, maxProperties: 16 }),
});

const Probabilities = Type.Record(Type.String(), Type.Number(), { description: 'sums to 1 (not rounded)' });
const Answer = Type.Union([
  Type.Object({ type: Type.Literal('noul'), noul: Type.Number({ minimum: 0, maximum: 1, description: 'P(yes)' }) }),
  Type.Object({ type: Type.Literal('choice'), choice: Type.String(), confidence: Type.Number(), probabilities: Probabilities }),
  Type.Object({
    type: Type.Literal('score'),
    score: Type.Number(),
    confidence: Type.Number(),
    legend: Type.Record(Type.String(), Type.String()),
    probabilities: Probabilities,
  }),
]);

export const DecisionResponse = Type.Object({
  model: Type.String(),
  answers: Type.Record(Type.String(), Answer, { description: 'keyed by question name, in request order' }),
  usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});

export const ValidationErrorBody = Type.Object({
  detail: Type.Array(
    Type.Object({
      type: Type.String(),
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
      input: Type.Optional(Type.Unknown()),
      ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
});

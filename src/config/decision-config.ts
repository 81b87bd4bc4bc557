/**
 * The decision route's configuration section, `decision:` (POST /v1/systemone): the model
 * System One aliases (`jev-latest`) resolve to (DECISION_DEFAULT_MODEL as a twin), the
 * zero-shot scorer of each decision model, and the models the nli and llm scorers ask.
 */
import { Type } from '@sinclair/typebox';
import type { ModelConfig } from './config.types.js';
import { configSection } from './section.js';

export interface DecisionConfig {
  /** null: the one decision model ready, if exactly one is. */
  defaultModel: string | null;
  aliases: readonly string[];
  /** Zero-shot scorer per decision model; absent: `embedding`. */
  scorers: Readonly<Record<string, 'embedding' | 'nli' | 'llm'>>;
  nliModel: string;
  /** The chat model the `llm` scorer asks; null when no scorer is `llm`. */
  llmModel: string | null;
}

const DecisionFileSchema = Type.Object(
  {
    default_model: Type.Optional(Type.String({ minLength: 1, description: 'the decision model `jev-latest` and the other aliases answer with (unset: the one decision model that is ready)' })),
    aliases: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'model names sent by System One clients (default: jev-latest, jev)' })),
    scorers: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.Literal('embedding'), Type.Literal('nli'), Type.Literal('llm')]), {
        description: 'zero-shot scorer per decision model (default embedding)',
      }),
    ),
    nli_model: Type.Optional(Type.String({ minLength: 1, description: 'the NLI cross-encoder the nli scorer runs (default deberta-v3-small)' })),
    llm_model: Type.Optional(
      Type.String({ minLength: 1, description: 'the chat model the llm scorer asks (an upstream with logprobs, or an in-process gguf model)' }),
    ),
  },
  { additionalProperties: false },
);

export const decisionSection = configSection({
  key: 'decision',
  schema: DecisionFileSchema,
  resolve: ({ file, env, core, problems }): DecisionConfig => {
    const models = new Map<string, ModelConfig>(Object.entries(core.models));
    const decides = (id: string) => models.get(id)?.entry.routes.includes('systemone') === true;
    const defaultModel = env.DECISION_DEFAULT_MODEL || file?.default_model || null;
    if (defaultModel !== null && !decides(defaultModel)) {
      const decisionModels = [...models.values()].filter((m) => m.entry.routes.includes('systemone')).map((m) => m.id);
      problems.push(`decision.default_model (DECISION_DEFAULT_MODEL): ${defaultModel} is not a decision model (one of ${decisionModels.join(', ')})`);
    }
    const scorers = file?.scorers ?? {};
    for (const id of Object.keys(scorers)) {
      if (!decides(id)) problems.push(`decision.scorers.${id}: not a decision model`);
    }
    const nliModel = file?.nli_model ?? 'deberta-v3-small';
    if (!models.has(nliModel)) problems.push(`decision.nli_model: unknown model id ${nliModel}`);
    const llmModel = file?.llm_model ?? null;
    if (llmModel !== null && !models.has(llmModel)) problems.push(`decision.llm_model: unknown model id ${llmModel}`);
    else if (llmModel !== null && models.get(llmModel)?.entry.task !== 'chat') problems.push(`decision.llm_model: ${llmModel} is not a chat model`);
    if (llmModel === null && Object.values(scorers).includes('llm')) {
      problems.push('decision.llm_model: required when a decision scorer is llm (the chat model it asks)');
    }
    return { defaultModel, aliases: file?.aliases ?? ['jev-latest', 'jev'], scorers, nliModel, llmModel };
  },
});

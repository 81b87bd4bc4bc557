/**
 * What the decision service needs from a decision model (a classifier pack on its
 * backbone), so the domain never touches a runtime: the model's label sets, the state's
 * label scores and embedding (one backbone pass per request), embeddings of free texts
 * (cached across requests), its tokenizer, and the fitted calibrators.
 */
import type { ModelSpec } from '../models/model-spec.types.js';
import type { LabelSet, LabelSetName } from '../shared/classification/label-sets.js';
import type { ModelCalibration } from './answers.js';

export type { ModelCalibration };
import type { QuestionType } from './validation.js';

export interface StateScores {
  /** The state's normalised embedding. */
  vector: Float32Array;
  /** Tokens of the state as the backbone read it. */
  tokens: number;
  /** Calibrated, rolled-up probability of every label of each set asked for, in the set's order. */
  probs: ReadonlyMap<LabelSetName, Float32Array>;
}

/**
 * A zero-shot question whole, as a chat model reads it (the `llm` scorer): its
 * instructions and its options in order (choice criteria as "name: description", score
 * levels, a noul's yes and no texts, "Yes"/"No" by default). P(yes) is P(first option).
 */
export interface ZeroShotQuestion {
  type: QuestionType;
  instructions: string | null;
  options: readonly string[];
}

/** One key per distinct question (equal questions are asked once). */
export const zeroShotQuestionKey = (q: ZeroShotQuestion): string => JSON.stringify([q.type, q.instructions, q.options]);

/** What zero-shot scoring needs (rule 5): the free texts (`embedding`, `nli`) and the whole questions (`llm`). */
export interface ZeroShotRequest {
  texts: readonly string[];
  questions: readonly ZeroShotQuestion[];
}

/**
 * Zero-shot answers about one state (rule 5). Each call names both the texts and the
 * question they come from: `embedding` and `nli` score the texts, `llm` reads the answer
 * to the question.
 */
export interface ZeroShotScores {
  /** A distribution over the options (choice criteria, score levels, a noul's true/false texts). */
  options(texts: readonly string[], question: ZeroShotQuestion): number[];
  /** The probability that the state matches `text` (a noul's instructions or yes text): P(yes) of `question`. */
  yes(text: string, question: ZeroShotQuestion): number;
}

/** The zero-shot scorers a decision model may be configured with. */
export type ZeroShotScorerKind = 'embedding' | 'nli' | 'llm';

export interface DecisionModel {
  readonly labelSets: readonly LabelSet[];
  readonly calibration: ModelCalibration | null;
  /** One backbone pass over the state; label scores of the `sets` named only (each costs a label-matrix product). */
  scoreState(text: string, sets: ReadonlySet<LabelSetName>, signal?: AbortSignal): Promise<StateScores>;
  /**
   * Scores the request against the state: `embedding` compares the state's embedding
   * with the texts' (cached per text), `nli` runs every (state, text) pair through the
   * cross-encoder in one batch, `llm` asks a chat model each question (concurrently) and
   * reads the answer from the option tokens' probabilities.
   */
  zeroShot(state: StateScores, stateText: string, wanted: ZeroShotRequest, signal?: AbortSignal): Promise<ZeroShotScores>;
  countTokens(text: string): number;
}

export interface DecisionScorer {
  /** Throws 503 `model_not_available` when the model cannot run. `requestId` goes to remote scorers. */
  open(model: ModelSpec, signal?: AbortSignal, requestId?: string): Promise<DecisionModel>;
  /** Whether `open` would find the model runnable now (its files in place); cheap enough for the request path. */
  ready(model: ModelSpec): Promise<boolean>;
}

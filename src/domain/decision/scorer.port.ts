/**
 * What the decision service needs from a decision model (a classifier pack on its
 * backbone), so the domain never touches a runtime: the model's label sets, the state's
 * label scores and embedding (one backbone pass per request), embeddings of free texts
 * (cached across requests), its tokenizer, and the fitted calibrators.
 */
import type { ModelConfig } from '../../config/schema.js';
import type { LabelSet, LabelSetName } from '../../inference/classifier/label-sets.js';
import type { ModelCalibration } from './answers.js';

export interface StateScores {
  /** The state's normalised embedding. */
  vector: Float32Array;
  /** Tokens of the state as the backbone read it. */
  tokens: number;
  /** Calibrated, rolled-up probability of every label of each set asked for, in the set's order. */
  probs: ReadonlyMap<LabelSetName, Float32Array>;
}

/** Zero-shot answers about one state, for the texts asked for (rule 5). */
export interface ZeroShotScores {
  /** A distribution over the options (choice criteria, score levels, a noul's true/false texts). */
  options(texts: readonly string[]): number[];
  /** The probability that the state matches `text` (a noul's instructions or yes text). */
  yes(text: string): number;
}

/** The zero-shot scorers a decision model may be configured with. */
export type ZeroShotScorerKind = 'embedding' | 'nli';

export interface DecisionModel {
  readonly labelSets: readonly LabelSet[];
  readonly calibration: ModelCalibration | null;
  /** One backbone pass over the state; label scores of the `sets` named only (each costs a label-matrix product). */
  scoreState(text: string, sets: ReadonlySet<LabelSetName>, signal?: AbortSignal): Promise<StateScores>;
  /**
   * Scores `texts` against the state, all in one batch: `embedding` compares the state's
   * embedding with theirs (cached per text), `nli` runs every (state, text) pair through
   * the cross-encoder.
   */
  zeroShot(state: StateScores, stateText: string, texts: readonly string[], signal?: AbortSignal): Promise<ZeroShotScores>;
  countTokens(text: string): number;
}

export interface DecisionScorer {
  /** Throws 503 `model_not_available` when the model cannot run. */
  open(model: ModelConfig, signal?: AbortSignal): Promise<DecisionModel>;
}

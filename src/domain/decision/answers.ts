/**
 * The decision answers from per-option probabilities: pure math, exactly as System One
 * publishes it (docs.typesafe.ai/confidence, "How confidence is calculated"):
 *
 * - choice: confidence = (n·p_max − 1)/(n − 1)            (1 when n = 1)
 * - score:  score = Σ i·p_i;  confidence = max(0, 1 − Σ p_i·|i − m| / MAD_unif),
 *           m the most likely level (lowest index on ties),
 *           MAD_unif = (1/n)·Σ |i − (n−1)/2|               (1 when n = 1)
 * - noul:   P(yes), no confidence.
 *
 * Probabilities are normalised to sum to 1 and NOT rounded (the official API quantises to
 * 0.01, which breaks the sum); their sum is 1 within floating-point error (< 1e-12).
 */
import type { QuestionType } from './validation.js';

export interface NoulAnswer {
  type: 'noul';
  noul: number;
}
export interface ChoiceAnswer {
  type: 'choice';
  choice: string;
  confidence: number;
  probabilities: Record<string, number>;
}
export interface ScoreAnswer {
  type: 'score';
  score: number;
  confidence: number;
  legend: Record<string, string>;
  probabilities: Record<string, number>;
}
export type DecisionAnswer = NoulAnswer | ChoiceAnswer | ScoreAnswer;

/** Scales non-negative weights to sum to 1 (all zero or non-finite: uniform). */
export function normalise(weights: readonly number[]): number[] {
  const clean = weights.map((w) => (Number.isFinite(w) && w > 0 ? w : 0));
  const total = clean.reduce((a, b) => a + b, 0);
  if (total <= 0) return clean.map(() => 1 / clean.length);
  return clean.map((w) => w / total);
}

/** Index of the largest value; the lowest index on ties. */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

export function choiceConfidence(probs: readonly number[]): number {
  const n = probs.length;
  if (n <= 1) return 1;
  return clamp01((n * probs[argmax(probs)]! - 1) / (n - 1));
}

export function scoreConfidence(probs: readonly number[]): number {
  const n = probs.length;
  if (n <= 1) return 1;
  const m = argmax(probs);
  const centre = (n - 1) / 2;
  let mad = 0;
  for (let i = 0; i < n; i++) mad += Math.abs(i - centre);
  mad /= n;
  let spread = 0;
  for (let i = 0; i < n; i++) spread += probs[i]! * Math.abs(i - m);
  return Math.max(0, Math.min(1, 1 - spread / mad));
}

const clamp01 = (x: number): number => Math.max(0, Math.min(1, x));

/** Null-prototype records: caller-chosen names are data, never prototype keys. */
function record<V>(entries: Iterable<[string, V]>): Record<string, V> {
  const out = Object.create(null) as Record<string, V>;
  for (const [key, value] of entries) out[key] = value;
  return out;
}

export function noulAnswer(pYes: number): NoulAnswer {
  return { type: 'noul', noul: clamp01(pYes) };
}

export function choiceAnswer(names: readonly string[], weights: readonly number[]): ChoiceAnswer {
  const probs = normalise(weights);
  return {
    type: 'choice',
    choice: names[argmax(probs)]!,
    confidence: choiceConfidence(probs),
    probabilities: record(names.map((name, i) => [name, probs[i]!])),
  };
}

export function scoreAnswer(levels: readonly string[], weights: readonly number[]): ScoreAnswer {
  const probs = normalise(weights);
  return {
    type: 'score',
    score: probs.reduce((sum, p, i) => sum + i * p, 0),
    confidence: scoreConfidence(probs),
    legend: record(levels.map((text, i) => [String(i), text])),
    probabilities: record(probs.map((p, i) => [String(i), p])),
  };
}

/**
 * A calibrator of one model and question type. noul: p' = σ(logit(p)/T + b). choice and
 * score: p'_i ∝ p_i^(1/T) (a softmax of log p_i / T; a bias common to every option would
 * cancel, so only `noul` uses it). Identity: T = 1, b = 0.
 */
export interface Calibrator {
  temperature: number;
  bias: number;
}
export const IDENTITY: Calibrator = Object.freeze({ temperature: 1, bias: 0 });

const EPS = 1e-12;
const logit = (p: number): number => Math.log(Math.max(p, EPS) / Math.max(1 - p, EPS));
const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

export function calibrateYes(pYes: number, cal: Calibrator): number {
  if (cal.temperature === 1 && cal.bias === 0) return pYes;
  return sigmoid(logit(pYes) / cal.temperature + cal.bias);
}

export function calibrateOptions(weights: readonly number[], cal: Calibrator): number[] {
  const probs = normalise(weights);
  if (cal.temperature === 1) return probs;
  const logs = probs.map((p) => Math.log(Math.max(p, EPS)) / cal.temperature);
  const top = Math.max(...logs);
  return normalise(logs.map((l) => Math.exp(l - top)));
}

/** Per-question-type calibrators of one model; a type without one is the identity. */
export type ModelCalibration = Partial<Record<QuestionType, Calibrator>>;
export const calibratorFor = (calibration: ModelCalibration | null, type: QuestionType): Calibrator => calibration?.[type] ?? IDENTITY;

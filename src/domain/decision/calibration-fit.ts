/**
 * Fits a decision model's calibrator of one question type from labelled answers, by
 * minimising log loss of the calibrated probabilities (`answers.ts` defines how a
 * calibrator applies):
 * - noul: temperature and bias of σ(logit(p)/T + b), Newton's method
 *   (`fitTemperatureBias` of the classifier packs, on logit(p));
 * - choice and score: the temperature of p_i^(1/T), a golden-section search over log T
 *   (the loss is unimodal in it); a bias cancels there.
 * Metrics are over the answer's top choice (for noul: P(yes) against yes): accuracy,
 * Brier score (summed over options), ECE over 15 bins of the top probability.
 */
import { calibrationMetrics, fitTemperatureBias, type CalibrationMetrics } from '../shared/classification/calibration.js';
import { argmax, calibrateOptions, calibrateYes, IDENTITY, type Calibrator } from './answers.js';
import type { QuestionType } from './validation.js';

/** Raw (uncalibrated) probabilities of one answer and the index of the right option (noul: [P(yes)], 1 = yes). */
export interface LabelledAnswer {
  probs: number[];
  truth: number;
}

export interface FitReport {
  type: QuestionType;
  calibrator: Calibrator;
  before: CalibrationMetrics;
  after: CalibrationMetrics;
}

const EPS = 1e-12;
const LOG_T_RANGE: [number, number] = [Math.log(0.02), Math.log(50)];

function applied(type: QuestionType, sample: LabelledAnswer, cal: Calibrator): number[] {
  return type === 'noul' ? [calibrateYes(sample.probs[0]!, cal)] : calibrateOptions(sample.probs, cal);
}

function optionsLoss(samples: readonly LabelledAnswer[], temperature: number): number {
  let sum = 0;
  for (const s of samples) sum -= Math.log(Math.max(calibrateOptions(s.probs, { temperature, bias: 0 })[s.truth]!, EPS));
  return sum / samples.length;
}

function fitTemperature(samples: readonly LabelledAnswer[]): Calibrator {
  const golden = (Math.sqrt(5) - 1) / 2;
  let [lo, hi] = LOG_T_RANGE;
  for (let i = 0; i < 80; i++) {
    const a = hi - golden * (hi - lo);
    const b = lo + golden * (hi - lo);
    if (optionsLoss(samples, Math.exp(a)) <= optionsLoss(samples, Math.exp(b))) hi = b;
    else lo = a;
  }
  return { temperature: Math.exp((lo + hi) / 2), bias: 0 };
}

export function fitCalibrator(type: QuestionType, samples: readonly LabelledAnswer[]): Calibrator {
  if (samples.length === 0) return IDENTITY;
  if (type !== 'noul') return fitTemperature(samples);
  const values = Float64Array.from(samples, (s) => {
    const p = Math.min(Math.max(s.probs[0]!, EPS), 1 - EPS);
    return Math.log(p / (1 - p));
  });
  return fitTemperatureBias({ values, truth: Uint8Array.from(samples, (s) => s.truth) }, IDENTITY);
}

/** Metrics of `samples` under `cal`. */
export function decisionMetrics(type: QuestionType, samples: readonly LabelledAnswer[], cal: Calibrator): CalibrationMetrics {
  if (type === 'noul') {
    return calibrationMetrics({ values: Float64Array.from(samples, (s) => applied(type, s, cal)[0]!), truth: Uint8Array.from(samples, (s) => s.truth) });
  }
  const probs = samples.map((s) => applied(type, s, cal));
  const top = Float64Array.from(probs, (p) => p[argmax(p)]!);
  const correct = Uint8Array.from(probs, (p, i) => (argmax(p) === samples[i]!.truth ? 1 : 0));
  // Reliability of the top choice: its probability against whether it was right.
  const reliability = calibrationMetrics({ values: top, truth: correct });
  let brier = 0;
  probs.forEach((p, i) => p.forEach((q, k) => (brier += (q - (k === samples[i]!.truth ? 1 : 0)) ** 2)));
  const n = samples.length;
  return { ...reliability, accuracy: n ? correct.reduce((a, b) => a + b, 0) / n : 0, brier: n ? brier / n : 0 };
}

export function fitReport(type: QuestionType, samples: readonly LabelledAnswer[]): FitReport {
  const calibrator = fitCalibrator(type, samples);
  return { type, calibrator, before: decisionMetrics(type, samples, IDENTITY), after: decisionMetrics(type, samples, calibrator) };
}

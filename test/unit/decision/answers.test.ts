/** Decision answers on hand-computed cases: the published confidence formulas, score, sums, calibrators. */
import { describe, expect, it } from 'vitest';
import {
  calibrateOptions,
  calibrateYes,
  choiceAnswer,
  choiceConfidence,
  noulAnswer,
  scoreAnswer,
  scoreConfidence,
} from '../../../src/domain/decision/answers.js';

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

describe('choice confidence (n·p_max − 1)/(n − 1)', () => {
  it('matches the published examples', () => {
    expect(choiceConfidence([0.6, 0.3, 0.1])).toBeCloseTo(0.4, 12);
    expect(choiceConfidence([0.88, 0.12, 0])).toBeCloseTo(0.82, 12); // the docs round to 0.81 from unquantised p
    expect(choiceConfidence([0.5, 0.5])).toBe(0);
    expect(choiceConfidence([1 / 3, 1 / 3, 1 / 3])).toBeCloseTo(0, 12);
    expect(choiceConfidence([1])).toBe(1);
  });
});

describe('score confidence max(0, 1 − Σ p_i·|i − m| / MAD_unif)', () => {
  it('matches the published examples', () => {
    // n = 3: MAD_unif = (1 + 0 + 1)/3 = 2/3
    expect(scoreConfidence([0, 0.57, 0.43])).toBeCloseTo(1 - 0.43 / (2 / 3), 12); // 0.355
    expect(scoreConfidence([0, 0.5, 0.5])).toBeCloseTo(0.25, 12); // m = 1 (lowest index on ties)
    expect(scoreConfidence([0.5, 0, 0.5])).toBe(0); // m = 0: 1 − 1/(2/3) < 0
    expect(scoreConfidence([0, 0.95, 0.05])).toBeCloseTo(1 - 0.05 / (2 / 3), 12); // 0.925
    // n = 5: MAD_unif = (2+1+0+1+2)/5 = 1.2; p = (.1,.2,.4,.2,.1), m = 2: Σ p|i−m| = .2+.2+.2+.2 = .8
    expect(scoreConfidence([0.1, 0.2, 0.4, 0.2, 0.1])).toBeCloseTo(1 - 0.8 / 1.2, 12);
    expect(scoreConfidence([1])).toBe(1);
  });
});

describe('answers', () => {
  it('noul is P(yes) alone', () => {
    expect(noulAnswer(0.95)).toEqual({ type: 'noul', noul: 0.95 });
  });

  it('choice: normalised probabilities keyed by name, argmax (first on ties), confidence', () => {
    const a = choiceAnswer(['billing', 'technical', 'sales'], [0.44, 0.06, 0]);
    expect(a.type).toBe('choice');
    expect(a.choice).toBe('billing');
    expect(a.probabilities.billing).toBeCloseTo(0.88, 12);
    expect(a.probabilities.technical).toBeCloseTo(0.12, 12);
    expect(a.probabilities.sales).toBe(0);
    expect(a.confidence).toBeCloseTo((3 * 0.88 - 1) / 2, 12);
    expect(Math.abs(sum(a.probabilities) - 1)).toBeLessThan(1e-6);
    expect(choiceAnswer(['x', 'y'], [2, 2]).choice).toBe('x');
    expect(Object.keys(choiceAnswer(['z', 'a', 'm'], [1, 1, 1]).probabilities)).toEqual(['z', 'a', 'm']);
  });

  it('score: Σ level·p, legend and probabilities keyed "0".."n-1"', () => {
    const a = scoreAnswer(['Calm', 'Frustrated', 'Very angry'], [0, 0.95, 0.05]);
    expect(a).toMatchObject({ type: 'score', legend: { 0: 'Calm', 1: 'Frustrated', 2: 'Very angry' } });
    expect(a.score).toBeCloseTo(1.05, 12);
    expect(a.probabilities).toEqual({ 0: 0, 1: 0.95, 2: 0.05 });
    expect(a.confidence).toBeCloseTo(0.925, 12);
    expect(Object.keys(a)).toEqual(['type', 'score', 'confidence', 'legend', 'probabilities']);
  });

  it('sums to 1 within 1e-6 for 32 awkward weights; all-zero weights are uniform', () => {
    const weights = Array.from({ length: 32 }, (_, i) => 1 / (i + 3));
    expect(Math.abs(sum(scoreAnswer(weights.map(String), weights).probabilities) - 1)).toBeLessThan(1e-6);
    expect(choiceAnswer(['a', 'b'], [0, 0]).probabilities).toEqual({ a: 0.5, b: 0.5 });
  });
});

describe('calibrators', () => {
  it('identity leaves answers unchanged', () => {
    expect(calibrateYes(0.73, { temperature: 1, bias: 0 })).toBe(0.73);
    expect(calibrateOptions([0.2, 0.8], { temperature: 1, bias: 0 })).toEqual([0.2, 0.8]);
  });

  it('noul: σ(logit(p)/T + b)', () => {
    // logit(0.8) = ln 4; T = 2 → ln 2 → σ = 2/3; then bias ln 2 → logit ln 4 → 0.8
    expect(calibrateYes(0.8, { temperature: 2, bias: 0 })).toBeCloseTo(2 / 3, 12);
    expect(calibrateYes(0.8, { temperature: 2, bias: Math.log(2) })).toBeCloseTo(0.8, 12);
  });

  it('options: p_i^(1/T) renormalised', () => {
    // (0.2, 0.8) at T = 2 → (√.2, √.8)/(√.2 + √.8) = (1/3, 2/3)
    const [a, b] = calibrateOptions([0.2, 0.8], { temperature: 2, bias: 5 });
    expect(a).toBeCloseTo(1 / 3, 12);
    expect(b).toBeCloseTo(2 / 3, 12);
  });
});

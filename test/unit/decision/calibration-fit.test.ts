/**
 * Calibrator fitting on synthetic labelled answers whose right calibrator is known: the
 * truth is drawn from the calibrated probabilities of a known (T, b), so the fit must
 * recover it and improve log-loss-driven metrics.
 */
import { describe, expect, it } from 'vitest';
import { calibrateOptions, calibrateYes } from '../../../src/domain/decision/answers.js';
import { fitReport, type LabelledAnswer } from '../../../src/domain/decision/calibration-fit.js';
import { Rng } from '../../fixtures/model-builders/rng.js';

const N = 6000;

function draw(rng: Rng, probs: number[]): number {
  let u = rng.next();
  for (let k = 0; k < probs.length; k++) {
    u -= probs[k]!;
    if (u < 0) return k;
  }
  return probs.length - 1;
}

describe('fitting decision calibrators', () => {
  it('noul: recovers temperature 2.5 and bias −0.7; ECE falls', () => {
    const rng = new Rng(7);
    const truth = { temperature: 2.5, bias: -0.7 };
    const samples: LabelledAnswer[] = Array.from({ length: N }, () => {
      const p = 1 / (1 + Math.exp(-rng.normal() * 4));
      const q = calibrateYes(p, truth);
      return { probs: [p], truth: rng.next() < q ? 1 : 0 };
    });
    const report = fitReport('noul', samples);
    expect(report.calibrator.temperature).toBeGreaterThan(2.1);
    expect(report.calibrator.temperature).toBeLessThan(2.9);
    expect(report.calibrator.bias).toBeGreaterThan(-0.9);
    expect(report.calibrator.bias).toBeLessThan(-0.5);
    expect(report.after.ece).toBeLessThan(report.before.ece);
    expect(report.after.brier).toBeLessThan(report.before.brier);
  });

  it('choice: recovers temperature 0.5 (under-confident raw answers); accuracy unchanged, ECE falls', () => {
    const rng = new Rng(11);
    const samples: LabelledAnswer[] = Array.from({ length: N }, () => {
      const raw = Array.from({ length: 4 }, () => Math.exp(rng.normal()));
      const total = raw.reduce((a, b) => a + b, 0);
      const probs = raw.map((r) => r / total);
      return { probs, truth: draw(rng, calibrateOptions(probs, { temperature: 0.5, bias: 0 })) };
    });
    const report = fitReport('choice', samples);
    expect(report.calibrator.bias).toBe(0);
    expect(report.calibrator.temperature).toBeGreaterThan(0.42);
    expect(report.calibrator.temperature).toBeLessThan(0.58);
    expect(report.after.accuracy).toBe(report.before.accuracy); // a temperature never changes the top choice
    expect(report.after.ece).toBeLessThan(report.before.ece);
    expect(report.after.pairs).toBe(N);
  });

  it('no samples: the identity', () => {
    expect(fitReport('score', []).calibrator).toEqual({ temperature: 1, bias: 0 });
  });
});

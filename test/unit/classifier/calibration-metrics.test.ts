import { describe, expect, it } from 'vitest';
import { calibrationMetrics, fitTemperatureBias, labelReports, thresholdFor } from '../../../src/domain/shared/classification/calibration.js';
import { sigmoid } from '../../../src/domain/shared/classification/calibration.js';
import { candidates, mmr, words } from '../../../src/inference/classifier/keywords.js';
import { shuffled, trainHead } from '../../../src/inference/classifier/logistic.js';
import { reliabilitySvg } from '../../../src/inference/classifier/reliability-svg.js';

describe('calibration metrics', () => {
  it('computes accuracy, Brier and 15-bin ECE by hand-checkable numbers', () => {
    const m = calibrationMetrics({ values: Float64Array.from([0.9, 0.9, 0.1, 0.1]), truth: Uint8Array.from([1, 0, 0, 0]) });
    expect(m.accuracy).toBe(0.75);
    expect(m.brier).toBeCloseTo((0.01 + 0.81 + 0.01 + 0.01) / 4, 12);
    // Bin of 0.9: confidence 0.9, frequency 0.5; bin of 0.1: confidence 0.1, frequency 0.
    expect(m.ece).toBeCloseTo(0.5 * 0.4 + 0.5 * 0.1, 12);
    expect(m.bins).toHaveLength(15);
    expect(m.bins.filter((b) => b.count > 0).map((b) => b.count)).toEqual([2, 2]);
  });

  it('fits temperature and bias that recover a known calibration', () => {
    // Truth drawn as Bernoulli(sigmoid(2z - 1)): the fit should find a ≈ 2, b ≈ -1.
    const n = 20_000;
    const values = new Float64Array(n);
    const truth = new Uint8Array(n);
    let s = 7;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < n; i++) {
      values[i] = rand() * 6 - 3;
      truth[i] = rand() < sigmoid(2 * values[i]! - 1) ? 1 : 0;
    }
    const fit = fitTemperatureBias({ values, truth }, { temperature: 0.1, bias: 3 });
    expect(1 / fit.temperature).toBeCloseTo(2, 0);
    expect(fit.bias).toBeCloseTo(-1, 0);
  });

  it('per-label precision, recall, F1 and macro averages', () => {
    const probs = [Float32Array.from([0.9, 0.2]), Float32Array.from([0.8, 0.7]), Float32Array.from([0.1, 0.6])];
    const truth = [Uint8Array.from([1, 0]), Uint8Array.from([0, 1]), Uint8Array.from([1, 1])];
    const r = labelReports(['a', 'b'], probs, truth);
    expect(r.labels[0]).toEqual({ label: 'a', support: 2, precision: 0.5, recall: 0.5, f1: 0.5 });
    expect(r.labels[1]).toEqual({ label: 'b', support: 2, precision: 1, recall: 1, f1: 1 });
    expect(r.macro).toEqual({ precision: 0.75, recall: 0.75, f1: 0.75 });
  });

  it('thresholds reach a target precision or recall', () => {
    const scores = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5];
    const truth = [1, 1, 0, 1, 0, 1];
    expect(thresholdFor(scores, truth, { precision: 1 })).toBe(0.9);
    expect(thresholdFor(scores, truth, { precision: 0.75 })).toBe(0.7);
    expect(thresholdFor(scores, truth, { recall: 0.75 })).toBe(0.7);
    expect(thresholdFor(scores, truth, { recall: 1 })).toBe(0.5);
    expect(thresholdFor(scores, [0, 0, 0, 0, 0, 0], { recall: 1 })).toBeNull();
  });

  it('draws a reliability diagram with both curves and their ECE', () => {
    const m = calibrationMetrics({ values: Float64Array.from([0.9, 0.1]), truth: Uint8Array.from([1, 0]) });
    const svg = reliabilitySvg('pack <a> & b', m, m);
    expect(svg).toContain('<title>pack &#60;a&#62; &#38; b</title>');
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('after: ECE 0.1000');
  });
});

describe('logistic heads', () => {
  it('separates linearly separable data and keeps the best epoch', () => {
    const x: Float32Array[] = [];
    const y: Uint8Array[] = [];
    for (let i = 0; i < 200; i++) {
      const a = ((i * 37) % 100) / 100 - 0.5;
      const b = ((i * 61) % 100) / 100 - 0.5;
      x.push(Float32Array.from([a + 5, b - 3]));
      y.push(Uint8Array.from([a + b > 0 ? 1 : 0, a > 0.1 ? 1 : 0]));
    }
    const order = shuffled(x.map((_, i) => i), 3);
    const pick = (idx: number[]) => ({ x: idx.map((i) => x[i]!), y: idx.map((i) => y[i]!) });
    const { head } = trainHead(['sum', 'a'], pick(order.slice(0, 160)), pick(order.slice(160)));
    let correct = 0;
    for (const i of order.slice(160)) {
      for (let l = 0; l < 2; l++) {
        const z = head.weights.data[l * 2]! * x[i]![0]! + head.weights.data[l * 2 + 1]! * x[i]![1]! + head.bias[l]!;
        if ((z >= 0 ? 1 : 0) === y[i]![l]) correct++;
      }
    }
    expect(correct / 80).toBeGreaterThanOrEqual(0.95);
  });
});

describe('keyphrases', () => {
  it('candidates are 1–3-word n-grams without stop words at either end', () => {
    expect(words("Tim's new phone — 5G, fast!")).toEqual(["tim's", 'new', 'phone', '5g', 'fast']);
    expect(candidates('the best phone of the year')).toEqual(['best', 'phone', 'year', 'best phone']);
  });

  it('MMR picks the most relevant phrase first, then a different one over a near-duplicate', () => {
    const doc = Float32Array.from([1, 0, 0]);
    const near = Float32Array.from([0.99, 0.141, 0]);
    const dup = Float32Array.from([0.98, 0.199, 0]);
    const other = Float32Array.from([0.6, 0, 0.8]);
    const picked = mmr(doc, ['best', 'duplicate', 'other'], [near, dup, other], 2, 0.5);
    expect(picked.map((p) => p.phrase)).toEqual(['best', 'other']);
    expect(picked[0]!.score).toBeCloseTo(0.99, 5);
  });
});

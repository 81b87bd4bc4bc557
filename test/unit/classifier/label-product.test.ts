/**
 * The label product's graph on onnxruntime-node: σ(scale · (row · v) + shift) for every
 * row, callers of one microtask turn sharing one run, and a session released and loaded
 * again. Expected values are computed here in float64 from the same inputs.
 */
import { describe, expect, it } from 'vitest';
import { LabelProduct } from '../../../src/inference/classifier/label-product.js';

const ROWS = [
  [1, 0, 0],
  [0, 2, 0],
  [0.5, -0.5, 1],
  [-1, -1, -1],
];
const SCALE = [1, 0.5, 20, 3];
const SHIFT = [0, -1, 2, 0.25];

function product(): LabelProduct {
  return new LabelProduct({ rows: ROWS.length, dim: 3, data: Float32Array.from(ROWS.flat()) }, { scale: Float32Array.from(SCALE), shift: Float32Array.from(SHIFT) });
}

const expected = (v: readonly number[]) =>
  ROWS.map((row, r) => {
    const z = row.reduce((sum, w, d) => sum + w * v[d]!, 0);
    return 1 / (1 + Math.exp(-(SCALE[r]! * z + SHIFT[r]!)));
  });

function rowsOf(p: { data: Float32Array; rows: number; first: number }, count: number): number[][] {
  return Array.from({ length: count }, (_, n) => Array.from(p.data.subarray((p.first + n) * p.rows, (p.first + n + 1) * p.rows)));
}

function expectClose(got: number[][], want: number[][]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((row, n) => row.forEach((p, r) => expect(Math.abs(p - want[n]![r]!), `vector ${n}, row ${r}`).toBeLessThan(1e-6)));
}

describe('LabelProduct', () => {
  it('answers the calibrated probability of every row for each vector', async () => {
    const vectors = [
      [0.2, 0.4, 0.1],
      [-0.3, 0.9, 0.05],
    ];
    const p = await product().multiply(vectors.map((v) => Float32Array.from(v)));
    expect(p.rows).toBe(4);
    expect(p.first).toBe(0);
    expectClose(rowsOf(p, 2), vectors.map(expected));
  });

  it('callers of one turn share one run, each reading its own vectors', async () => {
    const lp = product();
    const a = [Float32Array.from([1, 0, 0])];
    const b = [Float32Array.from([0, 1, 0]), Float32Array.from([0, 0, 1])];
    const [pa, pb] = await Promise.all([lp.multiply(a), lp.multiply(b)]);
    expect(pa.data).toBe(pb.data);
    expect([pa.first, pb.first]).toEqual([0, 1]);
    expectClose(rowsOf(pa, 1), [expected([1, 0, 0])]);
    expectClose(rowsOf(pb, 2), [expected([0, 1, 0]), expected([0, 0, 1])]);
    // A later turn is a run of its own.
    const pc = await lp.multiply(a);
    expect(pc.data).not.toBe(pa.data);
    expect(pc.first).toBe(0);
  });

  it('rejects a vector of the wrong dimension and a calibration of the wrong length', () => {
    expect(() => product().multiply([new Float32Array(4)])).toThrow('vector has 4 dimensions, the label matrix 3');
    expect(() => new LabelProduct({ rows: 2, dim: 1, data: new Float32Array(2) }, { scale: new Float32Array(2), shift: new Float32Array(1) })).toThrow(
      'the label matrix has 2 rows, its calibration 2 and 1',
    );
  });

  it('a closed product loads its session again on the next call', async () => {
    const lp = product();
    const v = [Float32Array.from([0.1, 0.2, 0.3])];
    expectClose(rowsOf(await lp.multiply(v), 1), [expected([0.1, 0.2, 0.3])]);
    await lp.close();
    await lp.close();
    expectClose(rowsOf(await lp.multiply(v), 1), [expected([0.1, 0.2, 0.3])]);
  });
});

/**
 * Label scores of one embedded text against a label set: raw logits as one matrix
 * product (zero-shot: the cached label embeddings, i.e. cosine similarity of normalised
 * vectors; trained: the head's weights and biases), then calibration
 * p = sigmoid(z / temperature + bias), then the roll-up that lets a parent's score cover
 * its branch (spec rule 3: p(parent) = max(p(parent), p(any descendant))).
 *
 * Serving takes calibrated probabilities of every set of a pack from one ONNX graph
 * (label-product.ts) and only rolls them up here (`setProbs`); the JavaScript `matVec`
 * and `calibrate` serve the offline paths (training, calibration) and free labels.
 */
import { sigmoid } from '../../domain/shared/classification/calibration.js';
import type { LabelSet } from '../../domain/shared/classification/label-sets.js';
import type { SetCalibration } from './manifest.js';

/** A row-major [rows × dim] matrix. */
export interface Matrix {
  rows: number;
  dim: number;
  data: Float32Array;
}

/** A trained linear head: logits = W·x + b for the labels it names (keys of its set). */
export interface LinearHead {
  labels: string[];
  weights: Matrix;
  bias: Float32Array;
}

/**
 * out[r] = Σ_d m[r, d] · x[d]: one pass over the matrix, four rows at a time so each
 * x[d] is loaded once per four rows (the JIT keeps the four sums in registers).
 */
export function matVec(m: Matrix, x: Float32Array, out: Float32Array = new Float32Array(m.rows)): Float32Array {
  const { rows, dim, data } = m;
  if (x.length !== dim) throw new Error(`vector has ${x.length} dimensions, the matrix ${dim}`);
  let r = 0;
  for (; r + 3 < rows; r += 4) {
    const b0 = r * dim;
    const b1 = b0 + dim;
    const b2 = b1 + dim;
    const b3 = b2 + dim;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let d = 0; d < dim; d++) {
      const v = x[d]!;
      s0 += data[b0 + d]! * v;
      s1 += data[b1 + d]! * v;
      s2 += data[b2 + d]! * v;
      s3 += data[b3 + d]! * v;
    }
    out[r] = s0;
    out[r + 1] = s1;
    out[r + 2] = s2;
    out[r + 3] = s3;
  }
  for (; r < rows; r++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += data[r * dim + d]! * x[d]!;
    out[r] = s;
  }
  return out;
}

export function calibrate(logits: Float32Array, cal: SetCalibration): Float32Array {
  const out = new Float32Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = sigmoid(logits[i]! / cal.temperature + cal.bias);
  return out;
}

/**
 * The (child, parent) pairs of a tree set, deepest children first, computed once per set:
 * the roll-up visits them in that order so a grandchild's score reaches its grandparent
 * in one pass, reading two typed arrays instead of the label objects.
 */
interface RollUpOrder {
  child: Int32Array;
  parent: Int32Array;
}
const orders = new WeakMap<LabelSet, RollUpOrder>();
function deepestFirst(set: LabelSet): RollUpOrder {
  let order = orders.get(set);
  if (order) return order;
  const depth = set.labels.map((label) => {
    let d = 0;
    for (let p = label.parent; p !== -1 && d < 64; p = set.labels[p]!.parent) d++;
    return d;
  });
  const children = set.labels.flatMap((label, i) => (label.parent === -1 ? [] : [i])).sort((a, b) => depth[b]! - depth[a]!);
  order = { child: Int32Array.from(children), parent: Int32Array.from(children, (i) => set.labels[i]!.parent) };
  orders.set(set, order);
  return order;
}

/** In place: every parent's probability becomes at least its children's. */
export function rollUp(set: LabelSet, probs: Float32Array): Float32Array {
  if (!set.tree) return probs;
  const { child, parent } = deepestFirst(set);
  for (let k = 0; k < child.length; k++) {
    const p = probs[child[k]!]!;
    if (p > probs[parent[k]!]!) probs[parent[k]!] = p;
  }
  return probs;
}

/**
 * Raw logits of every label of `set`: the head's where a head is trained (labels it does
 * not name get -Infinity: the head replaces the zero-shot scores of the whole set), else
 * the zero-shot cosine similarities.
 */
export function setLogits(set: LabelSet, vector: Float32Array, zeroShot: Matrix, head: LinearHead | null, headIndex?: readonly number[]): Float32Array {
  if (!head) return matVec(zeroShot, vector);
  const trained = matVec(head.weights, vector);
  const logits = new Float32Array(set.labels.length).fill(-Infinity);
  const index = headIndex ?? headLabelIndex(set, head);
  for (let k = 0; k < index.length; k++) if (index[k]! >= 0) logits[index[k]!] = trained[k]! + head.bias[k]!;
  return logits;
}

/** Where a set's rows sit in a pack's stacked label matrix, and the head they belong to. */
export interface SetRows {
  /** Index of the set's first row in the stacked matrix. */
  offset: number;
  head: LinearHead | null;
  /** For each head row, the label it scores (-1: a label the set no longer has). */
  headIndex: readonly number[];
}

/**
 * Rolled-up probabilities of `set` from `row`, the calibrated probabilities of every row
 * of a pack's label matrix for one vector (label-product.ts): the same values as
 * `rollUp(set, calibrate(setLogits(…), cal))`. Labels a head does not name keep
 * probability 0 (their logit is -Infinity).
 */
export function setProbs(set: LabelSet, rows: SetRows, row: Float32Array): Float32Array {
  if (!rows.head) return rollUp(set, row.slice(rows.offset, rows.offset + set.labels.length));
  const probs = new Float32Array(set.labels.length);
  const { headIndex, offset } = rows;
  for (let k = 0; k < headIndex.length; k++) {
    const i = headIndex[k]!;
    if (i >= 0) probs[i] = row[offset + k]!;
  }
  return rollUp(set, probs);
}

/** For each head label, its index in the set (-1 when the set no longer has it). */
export function headLabelIndex(set: LabelSet, head: LinearHead): number[] {
  const byKey = new Map(set.labels.map((l, i) => [l.key, i]));
  return head.labels.map((key) => byKey.get(key) ?? -1);
}

/**
 * Indices of the `k` largest values at or above `min`, best first; with `allowed`, only
 * indices it marks 1. Once `k` are picked, a value must beat the k-th to enter, so most
 * values cost one comparison.
 */
export function topK(values: Float32Array, k: number, min: number, allowed?: Uint8Array): number[] {
  const picked: number[] = [];
  if (k <= 0) return picked;
  let floor = min;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!(v >= floor) || (allowed && allowed[i] === 0)) continue;
    if (picked.length === k) {
      if (v <= floor) continue;
      picked[k - 1] = i;
    } else picked.push(i);
    for (let j = picked.length - 1; j > 0 && values[picked[j - 1]!]! < v; j--) {
      picked[j] = picked[j - 1]!;
      picked[j - 1] = i;
    }
    if (picked.length === k) floor = values[picked[k - 1]!]!;
  }
  return picked;
}

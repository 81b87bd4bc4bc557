/**
 * Multi-label linear heads: one-vs-rest logistic regression on sentence embeddings, all
 * labels fitted together as one [labels × dim] matrix, with L2 regularisation, Adam
 * mini-batch updates and early stopping on a validation split's log loss (the best
 * epoch's weights are kept). Features are standardised for the fit (sentence embeddings
 * differ from each other in small, correlated amounts) and the scaling is folded back
 * into the weights, so the head applies to raw embeddings.
 *
 * Written here rather than taken from npm: the maintained JS numeric libraries
 * (ml-logistic-regression, TensorFlow.js) are multi-class-only or pull a native or
 * WebGL runtime hundreds of times the size of this file; the problem is small
 * (hundreds to thousands of rows, 384 features) and a tested 100-line fit is enough.
 */
import type { LinearHead } from './scoring.js';
import { sigmoid } from '../../domain/shared/classification/calibration.js';

export interface TrainOptions {
  l2: number;
  learningRate: number;
  maxEpochs: number;
  batchSize: number;
  /** Epochs without a validation improvement before stopping. */
  patience: number;
  seed: number;
  onEpoch?: (epoch: number, validationLoss: number) => void;
}

export const DEFAULT_TRAIN: TrainOptions = { l2: 1e-4, learningRate: 0.05, maxEpochs: 200, batchSize: 32, patience: 10, seed: 1 };

/** Rows as vectors, targets as 0/1 per label. */
export interface Dataset {
  x: Float32Array[];
  y: Uint8Array[];
}

/** A deterministic shuffle (mulberry32), so a split and a run can be repeated. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Mean binary log loss of the head over every (row, label). */
export function logLoss(head: LinearHead, data: Dataset): number {
  const { rows, dim, data: w } = head.weights;
  let sum = 0;
  for (let n = 0; n < data.x.length; n++) {
    const x = data.x[n]!;
    for (let l = 0; l < rows; l++) {
      let z = head.bias[l]!;
      for (let d = 0; d < dim; d++) z += w[l * dim + d]! * x[d]!;
      const p = Math.min(1 - 1e-7, Math.max(1e-7, sigmoid(z)));
      sum -= data.y[n]![l] ? Math.log(p) : Math.log(1 - p);
    }
  }
  return sum / Math.max(1, data.x.length * rows);
}

/** Per-feature mean and standard deviation of `rows`. */
function featureScaling(rows: readonly Float32Array[], dim: number): { mean: Float64Array; std: Float64Array } {
  const mean = new Float64Array(dim);
  const std = new Float64Array(dim);
  for (const x of rows) for (let d = 0; d < dim; d++) mean[d]! += x[d]! / rows.length;
  for (const x of rows) for (let d = 0; d < dim; d++) std[d]! += (x[d]! - mean[d]!) ** 2 / rows.length;
  for (let d = 0; d < dim; d++) std[d] = Math.sqrt(std[d]!) || 1;
  return { mean, std };
}

function standardised(data: Dataset, mean: Float64Array, std: Float64Array): Dataset {
  return { x: data.x.map((x) => Float32Array.from(x, (v, d) => (v - mean[d]!) / std[d]!)), y: data.y };
}

/** Fits a head for `labels` on `train`, stopping when `validation` stops improving. */
export function trainHead(labels: string[], train: Dataset, validation: Dataset, options: TrainOptions = DEFAULT_TRAIN): { head: LinearHead; epochs: number; validationLoss: number } {
  const dim = train.x[0]?.length ?? 0;
  const { mean, std } = featureScaling(train.x, dim);
  const fitted = fitStandardised(labels, standardised(train, mean, std), standardised(validation, mean, std), dim, options);
  // w·((x − μ)/σ) + b = (w/σ)·x + (b − Σ w·μ/σ)
  const { rows, data } = fitted.head.weights;
  for (let l = 0; l < rows; l++) {
    let shift = 0;
    for (let d = 0; d < dim; d++) {
      data[l * dim + d] = data[l * dim + d]! / std[d]!;
      shift += data[l * dim + d]! * mean[d]!;
    }
    fitted.head.bias[l] = fitted.head.bias[l]! - shift;
  }
  return fitted;
}

function fitStandardised(labels: string[], train: Dataset, validation: Dataset, dim: number, options: TrainOptions): { head: LinearHead; epochs: number; validationLoss: number } {
  const rows = labels.length;
  const params = new Float32Array(rows * dim + rows);
  const m = new Float32Array(params.length);
  const v = new Float32Array(params.length);
  const grad = new Float32Array(params.length);
  const view = (p: Float32Array): LinearHead => ({ labels, weights: { rows, dim, data: p.subarray(0, rows * dim) }, bias: p.subarray(rows * dim) });
  const [b1, b2, eps] = [0.9, 0.999, 1e-8];
  let step = 0;
  let best = { loss: Infinity, params: params.slice(), epoch: 0 };
  for (let epoch = 1; epoch <= options.maxEpochs; epoch++) {
    const order = shuffled(train.x.map((_, i) => i), options.seed + epoch);
    for (let start = 0; start < order.length; start += options.batchSize) {
      const batch = order.slice(start, start + options.batchSize);
      grad.fill(0);
      for (const n of batch) {
        const x = train.x[n]!;
        for (let l = 0; l < rows; l++) {
          let z = params[rows * dim + l]!;
          for (let d = 0; d < dim; d++) z += params[l * dim + d]! * x[d]!;
          const err = sigmoid(z) - (train.y[n]![l] ?? 0);
          for (let d = 0; d < dim; d++) grad[l * dim + d]! += err * x[d]!;
          grad[rows * dim + l]! += err;
        }
      }
      step++;
      for (let i = 0; i < params.length; i++) {
        const decay = i < rows * dim ? options.l2 * params[i]! : 0;
        const g = grad[i]! / batch.length + decay;
        m[i] = b1 * m[i]! + (1 - b1) * g;
        v[i] = b2 * v[i]! + (1 - b2) * g * g;
        params[i]! -= (options.learningRate * (m[i]! / (1 - b1 ** step))) / (Math.sqrt(v[i]! / (1 - b2 ** step)) + eps);
      }
    }
    const loss = logLoss(view(params), validation.x.length > 0 ? validation : train);
    options.onEpoch?.(epoch, loss);
    if (loss < best.loss - 1e-6) best = { loss, params: params.slice(), epoch };
    else if (epoch - best.epoch >= options.patience) break;
  }
  const kept = best.params;
  return {
    head: { labels, weights: { rows, dim, data: kept.slice(0, rows * dim) }, bias: kept.slice(rows * dim) },
    epochs: best.epoch,
    validationLoss: best.loss,
  };
}

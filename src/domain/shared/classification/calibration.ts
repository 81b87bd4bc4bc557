/**
 * Calibration and its metrics over (prediction, truth) pairs of binary decisions:
 * temperature and bias fitted by minimising log loss (Newton's method on the two
 * parameters of p = sigmoid(a·z + b), a = 1/temperature), accuracy, Brier score,
 * expected calibration error over 15 equal-width bins, per-label precision, recall and
 * F1, and the moderation thresholds that reach a target precision or recall.
 */
export const ECE_BINS = 15;

/** σ(z) with one exponential of a non-positive number (no overflow, no second exp for z < 0). */
export function sigmoid(z: number): number {
  const e = Math.exp(-Math.abs(z));
  return z >= 0 ? 1 / (1 + e) : e / (1 + e);
}

export interface Pairs {
  /** Logits (calibration input) or probabilities (metrics input). */
  values: Float64Array;
  truth: Uint8Array;
}

/** A small ridge on (a, b): keeps the fit finite when the data are separable. */
const RIDGE = 1e-4;

function meanLoss(values: Float64Array, truth: Uint8Array, a: number, b: number): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const z = values[i]!;
    if (!Number.isFinite(z)) continue;
    const t = a * z + b;
    // log(1 + e^t) - y·t, computed without overflow.
    sum += (t > 0 ? t + Math.log1p(Math.exp(-t)) : Math.log1p(Math.exp(t))) - truth[i]! * t;
    n++;
  }
  return n ? sum / n + (RIDGE / 2) * (a * a + b * b) : 0;
}

/**
 * Fits a = 1/T and b on finite logits by damped Newton steps (halved until the loss
 * falls); keeps the current values if the data cannot improve them.
 */
export function fitTemperatureBias(logits: Pairs, start: { temperature: number; bias: number }): { temperature: number; bias: number } {
  let a = 1 / start.temperature;
  let b = start.bias;
  const { values, truth } = logits;
  let loss = meanLoss(values, truth, a, b);
  for (let iter = 0; iter < 100; iter++) {
    let ga = RIDGE * a;
    let gb = RIDGE * b;
    let haa = RIDGE;
    let hab = 0;
    let hbb = RIDGE;
    let n = 0;
    for (let i = 0; i < values.length; i++) {
      const z = values[i]!;
      if (!Number.isFinite(z)) continue;
      n++;
    }
    if (n === 0) break;
    for (let i = 0; i < values.length; i++) {
      const z = values[i]!;
      if (!Number.isFinite(z)) continue;
      const p = sigmoid(a * z + b);
      const e = (p - truth[i]!) / n;
      const w = (p * (1 - p)) / n;
      ga += e * z;
      gb += e;
      haa += w * z * z;
      hab += w * z;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (!(det > 0)) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    let step = 1;
    let next = meanLoss(values, truth, a - da, b - db);
    while (!(next < loss) && step > 1e-6) {
      step /= 2;
      next = meanLoss(values, truth, a - step * da, b - step * db);
    }
    if (!(next < loss)) break;
    a -= step * da;
    b -= step * db;
    const improved = loss - next;
    loss = next;
    if (improved < 1e-12) break;
  }
  // A non-positive slope would invert the ranking: keep the previous calibration then.
  if (!(a > 0) || !Number.isFinite(a) || !Number.isFinite(b)) return start;
  return { temperature: 1 / a, bias: b };
}

export interface CalibrationMetrics {
  pairs: number;
  accuracy: number;
  brier: number;
  ece: number;
  /** Per bin: mean confidence, observed frequency of positives, count. */
  bins: { confidence: number; frequency: number; count: number }[];
}

export function calibrationMetrics(probs: Pairs, threshold: (i: number) => number = () => 0.5): CalibrationMetrics {
  const bins = Array.from({ length: ECE_BINS }, () => ({ sumP: 0, positives: 0, count: 0 }));
  let correct = 0;
  let brier = 0;
  let n = 0;
  for (let i = 0; i < probs.values.length; i++) {
    const p = probs.values[i]!;
    const y = probs.truth[i]!;
    if (!Number.isFinite(p)) continue;
    n++;
    if ((p >= threshold(i) ? 1 : 0) === y) correct++;
    brier += (p - y) ** 2;
    const bin = bins[Math.min(ECE_BINS - 1, Math.floor(p * ECE_BINS))]!;
    bin.sumP += p;
    bin.positives += y;
    bin.count++;
  }
  let ece = 0;
  for (const bin of bins) if (bin.count > 0) ece += (bin.count / n) * Math.abs(bin.sumP / bin.count - bin.positives / bin.count);
  return {
    pairs: n,
    accuracy: n ? correct / n : 0,
    brier: n ? brier / n : 0,
    ece,
    bins: bins.map((b) => ({ confidence: b.count ? b.sumP / b.count : 0, frequency: b.count ? b.positives / b.count : 0, count: b.count })),
  };
}

export interface LabelReport {
  label: string;
  support: number;
  precision: number;
  recall: number;
  f1: number;
}

/** Per-label precision, recall and F1 of `probs[row][label] >= threshold`, plus the macro averages. */
export function labelReports(labels: readonly string[], probs: readonly Float32Array[], truth: readonly Uint8Array[], threshold = 0.5): { labels: LabelReport[]; macro: Omit<LabelReport, 'label' | 'support'> } {
  const reports = labels.map((label, l) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    probs.forEach((p, n) => {
      const predicted = p[l]! >= threshold;
      const actual = truth[n]![l] === 1;
      if (predicted && actual) tp++;
      else if (predicted) fp++;
      else if (actual) fn++;
    });
    const precision = tp + fp ? tp / (tp + fp) : 0;
    const recall = tp + fn ? tp / (tp + fn) : 0;
    return { label, support: tp + fn, precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
  });
  const mean = (k: 'precision' | 'recall' | 'f1') => reports.reduce((s, r) => s + r[k], 0) / Math.max(1, reports.length);
  return { labels: reports, macro: { precision: mean('precision'), recall: mean('recall'), f1: mean('f1') } };
}

/**
 * The decision threshold of one category: the lowest threshold whose precision reaches
 * `target` (most recall at that precision), or the highest whose recall does. Null when
 * no threshold reaches it.
 */
export function thresholdFor(scores: readonly number[], truth: readonly number[], target: { precision?: number; recall?: number }): number | null {
  const order = scores.map((s, i) => [s, truth[i]!] as const).sort((a, b) => b[0] - a[0]);
  const positives = truth.reduce((a, b) => a + b, 0);
  if (positives === 0) return null;
  let tp = 0;
  let chosen: number | null = null;
  for (let k = 0; k < order.length; k++) {
    tp += order[k]![1];
    // Only cut between distinct scores.
    if (k + 1 < order.length && order[k + 1]![0] === order[k]![0]) continue;
    const precision = tp / (k + 1);
    const recall = tp / positives;
    if (target.precision !== undefined && precision >= target.precision) chosen = order[k]![0];
    if (target.recall !== undefined && recall >= target.recall) return order[k]![0];
  }
  return chosen;
}

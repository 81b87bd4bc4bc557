/**
 * What `sluice packs train|calibrate|eval` do to a pack, on texts already embedded by
 * its backbone: fit heads on a training split and report on the held-out rest; fit
 * temperature and bias per label set (and moderation thresholds); measure. Changes are
 * written atomically: new head files under fresh names first, then the manifest by
 * rename, so a crash at any point leaves the previous pack whole.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { LabelSetName } from '../../domain/shared/classification/label-sets.js';
import { MANIFEST_FILE, type PackManifest, type SetCalibration } from './manifest.js';
import type { ClassifierPack } from './pack.js';
import { atomicWrite, headToJson } from './heads.js';
import { DEFAULT_TRAIN, shuffled, trainHead, type TrainOptions } from './logistic.js';
import { calibrate, rollUp, type LinearHead } from './scoring.js';
import { calibrationMetrics, fitTemperatureBias, labelReports, thresholdFor, type CalibrationMetrics, type LabelReport } from '../../domain/shared/classification/calibration.js';

export interface SetTrainingReport {
  set: LabelSetName;
  train: number;
  validation: number;
  epochs: number;
  labels: LabelReport[];
  macro: { precision: number; recall: number; f1: number };
}

/** The 80/20 split `train` holds out (deterministic for a seed). */
export function splitIndices(n: number, seed: number, validationShare = 0.2): { train: number[]; validation: number[] } {
  const order = shuffled(Array.from({ length: n }, (_, i) => i), seed);
  const cut = n < 5 ? n : Math.round(n * (1 - validationShare));
  return { train: order.slice(0, cut), validation: order.slice(cut) };
}

/** Labels of a set with at least one positive example: the ones a head can learn. */
function learnable(truth: readonly Uint8Array[], count: number): number[] {
  const seen = new Uint8Array(count);
  for (const row of truth) for (let i = 0; i < count; i++) if (row[i]) seen[i] = 1;
  return [...seen.keys()].filter((i) => seen[i]);
}

export function trainHeads(
  pack: ClassifierPack,
  vectors: readonly Float32Array[],
  truthBySet: Map<LabelSetName, Uint8Array[]>,
  options: Partial<TrainOptions> = {},
  onEpoch?: (set: LabelSetName, epoch: number, maxEpochs: number) => void,
): { heads: Map<LabelSetName, LinearHead>; reports: SetTrainingReport[] } {
  const opts = { ...DEFAULT_TRAIN, ...options };
  const { train, validation } = splitIndices(vectors.length, opts.seed);
  const heads = new Map<LabelSetName, LinearHead>();
  const reports: SetTrainingReport[] = [];
  for (const set of pack.labelSets) {
    const truth = truthBySet.get(set.name)!;
    const cols = learnable(truth, set.labels.length);
    if (cols.length === 0) continue;
    const project = (rows: number[]) => ({ x: rows.map((n) => vectors[n]!), y: rows.map((n) => Uint8Array.from(cols, (c) => truth[n]![c]!)) });
    const fitted = trainHead(cols.map((c) => set.labels[c]!.key), project(train), project(validation), {
      ...opts,
      onEpoch: (epoch) => onEpoch?.(set.name, epoch, opts.maxEpochs),
    });
    heads.set(set.name, fitted.head);
    const held = project(validation.length > 0 ? validation : train);
    const probs = held.x.map((x) => headProbs(fitted.head, x));
    const report = labelReports(cols.map((c) => set.labels[c]!.path.join(' > ')), probs, held.y);
    reports.push({ set: set.name, train: train.length, validation: validation.length, epochs: fitted.epochs, ...report });
  }
  return { heads, reports };
}

function headProbs(head: LinearHead, x: Float32Array): Float32Array {
  const { rows, dim, data } = head.weights;
  const out = new Float32Array(rows);
  for (let l = 0; l < rows; l++) {
    let z = head.bias[l]!;
    for (let d = 0; d < dim; d++) z += data[l * dim + d]! * x[d]!;
    out[l] = 1 / (1 + Math.exp(-z));
  }
  return out;
}

export interface SetCalibrationReport {
  set: LabelSetName;
  before: CalibrationMetrics;
  after: CalibrationMetrics;
  calibration: SetCalibration;
  thresholds?: Record<string, number>;
}

/** Flattened (probability, truth) pairs of a set under a calibration, after roll-up. */
function probPairs(pack: ClassifierPack, set: LabelSetName, vectors: readonly Float32Array[], truth: readonly Uint8Array[], cal: SetCalibration) {
  const labelSet = pack.labelSets.find((s) => s.name === set)!;
  const rows = vectors.map((v) => rollUp(labelSet, calibrate(pack.logits(set, v), cal)));
  const count = labelSet.labels.length;
  const values = new Float64Array(rows.length * count);
  const flat = new Uint8Array(rows.length * count);
  rows.forEach((p, n) => {
    values.set(p, n * count);
    flat.set(truth[n]!, n * count);
  });
  return { rows, pairs: { values, truth: flat } };
}

/** Metrics of every set under the pack's current calibration (`sluice packs eval`). */
export function evaluate(pack: ClassifierPack, vectors: readonly Float32Array[], truthBySet: Map<LabelSetName, Uint8Array[]>): { set: LabelSetName; metrics: CalibrationMetrics }[] {
  return pack.labelSets.map((s) => ({
    set: s.name,
    metrics: calibrationMetrics(probPairs(pack, s.name, vectors, truthBySet.get(s.name)!, pack.calibration(s.name)).pairs),
  }));
}

export interface CalibrateOptions {
  targetPrecision?: number;
  targetRecall?: number;
}

export function calibrateSets(pack: ClassifierPack, vectors: readonly Float32Array[], truthBySet: Map<LabelSetName, Uint8Array[]>, options: CalibrateOptions = {}): SetCalibrationReport[] {
  return pack.labelSets.map((s) => {
    const truth = truthBySet.get(s.name)!;
    const current = pack.calibration(s.name);
    const before = calibrationMetrics(probPairs(pack, s.name, vectors, truth, current).pairs);
    const logits = new Float64Array(vectors.length * s.labels.length);
    const flat = new Uint8Array(logits.length);
    vectors.forEach((v, n) => {
      logits.set(pack.logits(s.name, v), n * s.labels.length);
      flat.set(truth[n]!, n * s.labels.length);
    });
    const fitted = fitTemperatureBias({ values: logits, truth: flat }, current);
    const { rows, pairs } = probPairs(pack, s.name, vectors, truth, fitted);
    const report: SetCalibrationReport = { set: s.name, before, after: calibrationMetrics(pairs), calibration: fitted };
    if (s.name === 'moderation' && (options.targetPrecision !== undefined || options.targetRecall !== undefined)) {
      report.thresholds = {};
      s.labels.forEach((label, i) => {
        const t = thresholdFor(rows.map((p) => p[i]!), truth.map((y) => y[i]!), { precision: options.targetPrecision, recall: options.targetRecall });
        if (t !== null) report.thresholds![label.key] = Math.min(1, Math.max(0, t));
      });
    }
    return report;
  });
}

/**
 * Writes heads and manifest changes: each head to `heads/<set>-<time>.json`, then the
 * manifest pointing at them (one rename), then the head files no longer referenced.
 */
export async function writePackChanges(pack: ClassifierPack, changes: { heads?: Map<LabelSetName, LinearHead>; manifest?: (m: PackManifest) => PackManifest }): Promise<PackManifest> {
  let manifest: PackManifest = structuredClone(pack.manifest);
  const stamp = Date.now().toString(36);
  for (const [set, head] of changes.heads ?? []) {
    const file = `heads/${set}-${stamp}.json`;
    await atomicWrite(path.join(pack.dir, file), headToJson(set, pack.backbone.fingerprint, head));
    manifest.heads[set] = file;
    // A fresh head starts uncalibrated: its logits are log-odds already.
    manifest.calibration[set] = { temperature: 1, bias: 0 };
  }
  if (changes.manifest) manifest = changes.manifest(manifest);
  await atomicWrite(path.join(pack.dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  const kept = new Set(Object.values(manifest.heads).map((f) => path.basename(f)));
  const present = await readdir(path.join(pack.dir, 'heads')).catch(() => [] as string[]);
  await Promise.all(present.filter((f) => !kept.has(f)).map((f) => rm(path.join(pack.dir, 'heads', f), { force: true })));
  return manifest;
}

/**
 * `sluice packs train|calibrate|eval <id> <labelled.jsonl>`: fit a classifier pack's
 * heads, fit its calibration (and moderation thresholds), or measure it, on labelled
 * JSON Lines (format in docs/models.md). Texts are embedded by the pack's own backbone in
 * process, with a progress bar on a terminal; reports go to stdout (`--json` for JSON).
 */
import path from 'node:path';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import pino from 'pino';
import { loadConfig } from '../../config/load.js';
import { AppError } from '../../domain/shared/errors.js';
import { OnnxBackend } from '../../inference/backends/onnx/index.js';
import { defaultManifest, isPackModel, PACK_MODEL_IDS } from '../../inference/classifier/manifest.js';
import type { ClassifierPack } from '../../inference/classifier/pack.js';
import { readLabelled, targets, type Example } from '../../inference/classifier/labelled-data.js';
import { calibrateSets, evaluate, trainHeads, writePackChanges } from '../../inference/classifier/training.js';
import type { CalibrationMetrics } from '../../domain/shared/classification/calibration.js';
import { reliabilitySvg } from '../../inference/classifier/reliability-svg.js';
import { atomicWrite } from '../../inference/classifier/heads.js';
import { printJson } from '../context.js';

const EMBED_CHUNK = 64;

interface Session {
  pack: ClassifierPack;
  examples: Example[];
  vectors: Float32Array[];
  truth: ReturnType<typeof targets>;
}

/** A bar on a terminal, nothing otherwise. */
function progress(label: string, total: number): { tick: (n: number) => void; stop: () => void } {
  if (!process.stderr.isTTY) return { tick: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar({ stream: process.stderr, format: `${label} {bar} {value}/{total}`, hideCursor: true }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return { tick: (n) => bar.increment(n), stop: () => bar.stop() };
}

async function withPack<T>(id: string, file: string, work: (s: Session) => Promise<T>): Promise<T> {
  if (!isPackModel(id)) throw new AppError('invalid_request', `${id} is not a classifier pack (packs: ${PACK_MODEL_IDS.join(', ')})`);
  const config = loadConfig();
  const backend = new OnnxBackend(config.runtimes, pino({ level: 'warn' }, pino.destination(2)), {}, config.models);
  try {
    const examples = await readLabelled(file, path.basename(file));
    const pack = await backend.packs.pack(config.models[id]!);
    const truth = targets(pack, examples, path.basename(file));
    const bar = progress('embedding', examples.length);
    const vectors: Float32Array[] = [];
    try {
      for (let start = 0; start < examples.length; start += EMBED_CHUNK) {
        const chunk = examples.slice(start, start + EMBED_CHUNK).map((e) => e.text);
        const { vectors: v } = await pack.backbone.embed(chunk);
        // Copies: the runtime's vectors are views of one batch buffer.
        vectors.push(...v.map((x) => Float32Array.from(x)));
        bar.tick(chunk.length);
      }
    } finally {
      bar.stop();
    }
    return await work({ pack, examples, vectors, truth });
  } finally {
    await backend.close();
  }
}

const f = (x: number) => x.toFixed(4);

function metricsLine(name: string, m: CalibrationMetrics): string {
  return `${name}: accuracy ${f(m.accuracy)}  brier ${f(m.brier)}  ece(15 bins) ${f(m.ece)}  (${m.pairs} label decisions)`;
}

async function train(id: string, file: string, options: { json?: boolean; l2: string; seed: string }): Promise<void> {
  await withPack(id, file, async ({ pack, vectors, truth }) => {
    const l2 = Number(options.l2);
    const seed = Number(options.seed);
    if (!(l2 >= 0) || !Number.isInteger(seed)) throw new AppError('invalid_request', '--l2 must be a number ≥ 0 and --seed an integer');
    // One bar per label set, over the epoch budget (early stopping may end it sooner).
    let bar: ReturnType<typeof progress> | null = null;
    let current = '';
    const { heads, reports } = trainHeads(pack, vectors, truth, { l2, seed }, (set, _epoch, max) => {
      if (set !== current) {
        bar?.stop();
        bar = progress(`training ${set} (epochs)`, max);
        current = set;
      }
      bar!.tick(1);
    });
    (bar as ReturnType<typeof progress> | null)?.stop();
    if (heads.size === 0) throw new AppError('invalid_request', `${path.basename(file)} has no positive example for any label of ${id}`);
    await writePackChanges(pack, { heads });
    if (options.json) return printJson({ model: id, sets: reports });
    for (const r of reports) {
      console.log(`${r.set}: ${r.train} training / ${r.validation} held-out examples, best epoch ${r.epochs}`);
      console.log(`  ${'label'.padEnd(40)} support  precision  recall  f1`);
      for (const l of r.labels) console.log(`  ${l.label.slice(0, 40).padEnd(40)} ${String(l.support).padStart(7)}  ${f(l.precision)}     ${f(l.recall)}  ${f(l.f1)}`);
      console.log(`  ${'macro'.padEnd(40)} ${''.padStart(7)}  ${f(r.macro.precision)}     ${f(r.macro.recall)}  ${f(r.macro.f1)}`);
    }
    console.log(`heads written to ${id}; run \`sluice packs calibrate ${id} <file>\` on separate data to calibrate them`);
  });
}

async function calibrateCommand(id: string, file: string, options: { json?: boolean; targetPrecision?: string; targetRecall?: string }): Promise<void> {
  const targetPrecision = options.targetPrecision === undefined ? undefined : Number(options.targetPrecision);
  const targetRecall = options.targetRecall === undefined ? undefined : Number(options.targetRecall);
  for (const t of [targetPrecision, targetRecall]) {
    if (t !== undefined && !(t > 0 && t <= 1)) throw new AppError('invalid_request', 'targets must be numbers in (0, 1]');
  }
  await withPack(id, file, async ({ pack, vectors, truth }) => {
    const reports = calibrateSets(pack, vectors, truth, { targetPrecision, targetRecall });
    await writePackChanges(pack, {
      manifest: (m) => {
        for (const r of reports) m.calibration[r.set] = r.calibration;
        const thresholds = reports.find((r) => r.thresholds)?.thresholds;
        if (thresholds) m.thresholds = { ...m.thresholds, ...thresholds };
        return m;
      },
    });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const base = path.join(pack.dir, 'reports', `calibration-${stamp}`);
    for (const r of reports) await atomicWrite(`${base}-${r.set}.svg`, reliabilitySvg(`${id} · ${r.set}`, r.before, r.after));
    await atomicWrite(`${base}.json`, `${JSON.stringify({ model: id, sets: reports }, null, 2)}\n`);
    const where = `${id}/reports/calibration-${stamp}.json (reliability diagrams: calibration-${stamp}-<set>.svg)`;
    if (options.json) return printJson({ model: id, report: where, sets: reports.map(({ set, calibration, thresholds, before, after }) => ({ set, calibration, thresholds, before: { ...before, bins: undefined }, after: { ...after, bins: undefined } })) });
    for (const r of reports) {
      console.log(`${r.set}: temperature ${f(r.calibration.temperature)}  bias ${f(r.calibration.bias)}`);
      console.log(`  ${metricsLine('before', r.before)}`);
      console.log(`  ${metricsLine('after ', r.after)}`);
      if (r.thresholds) console.log(`  thresholds: ${Object.entries(r.thresholds).map(([k, v]) => `${k}=${f(v)}`).join(' ')}`);
    }
    console.log(`report: ${where}`);
  });
}

async function evalCommand(id: string, file: string, options: { json?: boolean }): Promise<void> {
  await withPack(id, file, async ({ pack, vectors, truth }) => {
    const results = evaluate(pack, vectors, truth);
    if (options.json) return printJson({ model: id, sets: results.map((r) => ({ set: r.set, ...r.metrics, bins: undefined })) });
    for (const r of results) console.log(metricsLine(r.set, r.metrics));
  });
}

export function registerPacksCommands(program: Command): void {
  const packs = program.command('packs').description('train, calibrate and evaluate the zlm-* classifier packs on labelled JSON Lines');
  packs
    .command('train')
    .argument('<id>', 'pack model id')
    .argument('<labelled>', 'labelled .jsonl file')
    .description('fit linear heads (one-vs-rest logistic regression) on 80% and report on the held-out 20%')
    .option('--l2 <lambda>', 'L2 regularisation strength', '0.0001')
    .option('--seed <n>', 'seed of the split and the shuffles', '1')
    .option('--json', 'print JSON')
    .action(train);
  packs
    .command('calibrate')
    .argument('<id>', 'pack model id')
    .argument('<labelled>', 'labelled .jsonl file')
    .description('fit temperature and bias per label set by log loss; moderation thresholds at a target precision or recall')
    .option('--target-precision <p>', 'moderation: lowest threshold reaching this precision')
    .option('--target-recall <r>', 'moderation: highest threshold reaching this recall')
    .option('--json', 'print JSON')
    .action(calibrateCommand);
  packs
    .command('eval')
    .argument('<id>', 'pack model id')
    .argument('<labelled>', 'labelled .jsonl file')
    .description('accuracy, Brier score and expected calibration error, changing nothing')
    .option('--json', 'print JSON')
    .action(evalCommand);
}

/**
 * `sluice models pull <zlm id>`: the backbone from the Hub unless it is already in
 * MODELS_DIR (copied in by hand, or pulled before: no network then), then the manifest
 * and the label-embedding cache, computed locally.
 */
export async function pullPack(id: string, pullBackbone: (backboneId: string) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const model = config.models[id]!;
  const backend = new OnnxBackend(config.runtimes, pino({ level: 'warn' }, pino.destination(2)), {}, config.models);
  try {
    const status = await backend.packs.status(model);
    let pulled: unknown = null;
    if (!status.ready) {
      const backbone = backend.packs.backboneModel(model, defaultManifest(id));
      console.error(`${id}: pulling its backbone ${backbone.id}`);
      pulled = await pullBackbone(backbone.id);
    }
    const bar = progress('label sets', defaultManifest(id).label_sets.length);
    const cache: { set: string; outcome: string }[] = [];
    try {
      const { manifest } = await backend.packs.assemble(model, (e) => {
        cache.push(e);
        bar.tick(1);
      });
      printJson({ model: id, backbone: manifest.backbone.model, label_sets: manifest.label_sets, label_cache: cache, backbone_pull: pulled });
    } finally {
      bar.stop();
    }
  } finally {
    await backend.close();
  }
}

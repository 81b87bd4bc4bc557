/**
 * Training and calibrating a pack on the random-weight test backbone, with synthetic data
 * whose right answer is known: texts of common filler words, and a marker word per
 * category (the embeddings become separable only through the marker). Held-out F1 of the
 * trained heads, the trained head replacing zero-shot scores on the route's engine, and
 * calibration lowering the ECE of a deliberately over-confident head.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import { targets, type Example } from '../../../src/inference/classifier/labelled-data.js';
import { calibrateSets, evaluate, trainHeads, writePackChanges } from '../../../src/inference/classifier/training.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';
import { buildBertEncoder } from '../../fixtures/model-builders/bert.js';
import { wordPieceTokenizer } from '../../fixtures/model-builders/tokenizers.js';
import { Rng } from '../../fixtures/model-builders/rng.js';

const MARKERS: Record<string, string> = { violence: 'zorbax', harassment: 'quintor', illicit: 'flumph' };
const FILLER = 'the of and to in is you that was for on are with as at be this have from or had by word but what some we can out other'.split(' ');

function synthetic(count: number, seed: number): Example[] {
  const rng = new Rng(seed);
  const categories = Object.keys(MARKERS);
  return Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: 8 + Math.floor(rng.next() * 8) }, () => FILLER[Math.floor(rng.next() * FILLER.length)]!);
    const labels = i % 4 === 3 ? [] : [categories[i % 4]!];
    for (const label of labels) words.splice(Math.floor(rng.next() * words.length), 0, MARKERS[label]!, MARKERS[label]!);
    return { line: i + 1, text: words.join(' '), labels };
  });
}

let modelsDir: string;
let config: Readonly<Config>;
let backend: OnnxBackend;

beforeAll(() => {
  modelsDir = mkdtempSync(path.join(tmpdir(), 'sluice-packs-'));
  buildBertEncoder(path.join(modelsDir, 'all-minilm-l6-v2'), wordPieceTokenizer(Object.values(MARKERS)), undefined, 11);
  config = loadConfig({ MODELS_DIR: modelsDir, DATA_DIR: modelsDir, LOG_LEVEL: 'silent' });
  backend = new OnnxBackend(config.runtimes, pino({ level: 'silent' }), {}, config.models);
});

afterAll(async () => {
  await backend?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

async function embedded(examples: Example[]) {
  const model = config.models['zlm-v1-moderation-edge']!;
  const pack = await backend.packs.pack(model);
  const { vectors } = await pack.backbone.embed(examples.map((e) => e.text));
  return { model, pack, vectors: vectors.map((v) => Float32Array.from(v)), truth: targets(pack, examples, 'synthetic.jsonl') };
}

describe('sluice packs train (in process)', () => {
  it('reaches macro F1 ≥ 0.9 on held-out synthetic data, and the head replaces zero-shot scores', async () => {
    const { model, pack, vectors, truth } = await embedded(synthetic(240, 7));
    const { heads, reports } = trainHeads(pack, vectors, truth);
    const moderation = reports.find((r) => r.set === 'moderation')!;
    expect(moderation.validation).toBe(48);
    expect(moderation.labels.map((l) => l.label).sort()).toEqual(['harassment', 'illicit', 'violence']);
    expect(moderation.macro.f1).toBeGreaterThanOrEqual(0.9);
    expect(reports.find((r) => r.set === 'unsafe')!.macro.f1).toBeGreaterThanOrEqual(0.9);

    const manifest = await writePackChanges(pack, { heads });
    expect(Object.keys(manifest.heads).sort()).toEqual(['moderation', 'unsafe']);
    const onDisk = JSON.parse(readFileSync(path.join(modelsDir, 'zlm-v1-moderation-edge', 'pack.json'), 'utf8'));
    expect(onDisk.heads).toEqual(manifest.heads);

    // The route's engine picks the new manifest up: a marker text is flagged in its category only.
    const [violent, , , neutral] = synthetic(4, 99);
    expect([violent!.labels, neutral!.labels]).toEqual([['violence'], []]);
    const out = await backend.moderate({ requestId: 't', signal: new AbortController().signal, model, inputs: [violent!.text, neutral!.text], options: {} });
    expect(out.results[0]!.categories.violence).toBe(true);
    expect(out.results[0]!.categories.harassment).toBe(false);
    expect(out.results[0]!.unsafeScore).toBeGreaterThan(0.5);
    expect(out.results[1]!.flagged).toBe(false);
    // Categories the head was not trained on score 0: the head replaces the whole set.
    expect(out.results[0]!.categoryScores['sexual/minors']).toBe(0);
    const scores = await backend.scorePack(model, synthetic(2, 99)[1]!.text);
    const set = scores.sets.get('moderation')!;
    expect(set.trained).toBe(true);
    expect(set.probs[findLabel(set.set, 'Harassment')]).toBeGreaterThan(0.5);
  });

  it('calibration lowers the ECE of a deliberately over-confident head', async () => {
    const examples = synthetic(160, 11);
    // Label noise makes certainty wrong: a tenth of the examples lose their label.
    for (const e of examples.filter((_, i) => i % 10 === 0)) e.labels = [];
    const { pack, vectors, truth } = await embedded(examples);
    await writePackChanges(pack, { manifest: (m) => ({ ...m, calibration: { ...m.calibration, moderation: { temperature: 0.1, bias: 0 } } }) });
    const overConfident = await embedded(examples);
    const before = evaluate(overConfident.pack, vectors, truth).find((r) => r.set === 'moderation')!.metrics;
    const report = calibrateSets(overConfident.pack, vectors, truth, { targetPrecision: 0.9 }).find((r) => r.set === 'moderation')!;
    expect(report.before.ece).toBeCloseTo(before.ece, 10);
    expect(report.after.ece).toBeLessThan(report.before.ece);
    expect(report.after.brier).toBeLessThanOrEqual(report.before.brier);
    expect(report.calibration.temperature).toBeGreaterThan(0.1);
    expect(Object.keys(report.thresholds!).sort()).toEqual(['harassment', 'illicit', 'violence']);
    expect(report.before.bins.reduce((n, b) => n + b.count, 0)).toBe(report.before.pairs);
    void pack;
  });

  it('recomputes the label-embedding cache when the backbone changes, and only then', async () => {
    const model = config.models['zlm-v1-moderation-edge']!;
    const events: string[] = [];
    await backend.packs.assemble(model, (e) => events.push(`${e.set}:${e.outcome}`));
    expect(events).toEqual(['moderation:hit', 'unsafe:hit']);
    // New weights in the backbone's directory: a different fingerprint. Heads trained on
    // the old backbone are refused until retrained.
    buildBertEncoder(path.join(modelsDir, 'all-minilm-l6-v2'), wordPieceTokenizer(Object.values(MARKERS)), undefined, 12);
    const fresh = new OnnxBackend(config.runtimes, pino({ level: 'silent' }), {}, config.models);
    const file = path.join(modelsDir, 'zlm-v1-moderation-edge', 'pack.json');
    const trained = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, JSON.stringify({ ...JSON.parse(trained), heads: {} }));
      events.length = 0;
      await fresh.packs.assemble(model, (e) => events.push(`${e.set}:${e.outcome}`));
      expect(events).toEqual(['moderation:computed', 'unsafe:computed']);
      writeFileSync(file, trained);
      await expect(fresh.packs.pack(model)).rejects.toThrow(
        /^Model zlm-v1-moderation-edge cannot be loaded: zlm-v1-moderation-edge\/heads\/moderation-\w+\.json: key backbone: the head was trained on another backbone; run `sluice packs train` again$/,
      );
    } finally {
      await fresh.close();
    }
  });
});

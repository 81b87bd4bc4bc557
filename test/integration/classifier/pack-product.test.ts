/**
 * The served label scores (one ONNX matrix product over every set of a pack, shared by
 * the callers of one event-loop turn) against the offline path (JavaScript logits, then
 * calibration, then roll-up), on the random-weight test backbone: a pack with a trained
 * head on one set and zero-shot scores on the other, and an IAB pack whose tree rolls up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import type { ClassifierPack, SetScores } from '../../../src/inference/classifier/pack.js';
import type { LabelSetName } from '../../../src/domain/shared/classification/label-sets.js';
import { targets, type Example } from '../../../src/inference/classifier/labelled-data.js';
import { trainHeads, writePackChanges } from '../../../src/inference/classifier/training.js';
import { calibrate, rollUp } from '../../../src/inference/classifier/scoring.js';
import { buildBertEncoder } from '../../fixtures/model-builders/bert.js';
import { wordPieceTokenizer } from '../../fixtures/model-builders/tokenizers.js';

const MARKERS = ['zorbax', 'quintor'];
const TEXTS = [
  'the league opens its football season at home',
  'zorbax zorbax the of and to in',
  'quintor quintor you that was for',
  'a new phone camera takes sharp photos',
  'travel to the mountains with your family this summer',
];

let modelsDir: string;
let config: Readonly<Config>;
let backend: OnnxBackend;

beforeAll(() => {
  modelsDir = mkdtempSync(path.join(tmpdir(), 'sluice-pack-product-'));
  buildBertEncoder(path.join(modelsDir, 'all-minilm-l6-v2'), wordPieceTokenizer(MARKERS), undefined, 5);
  config = loadConfig({ MODELS_DIR: modelsDir, DATA_DIR: modelsDir, LOG_LEVEL: 'silent' });
  backend = new OnnxBackend(config.runtimes, pino({ level: 'silent' }), {}, config.models);
});

afterAll(async () => {
  await backend?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

/** The offline path's probabilities of every set of `pack` for `vector`. */
function offline(pack: ClassifierPack, vector: Float32Array): Map<LabelSetName, number[]> {
  return new Map(pack.labelSets.map((set) => [set.name, Array.from(rollUp(set, calibrate(pack.logits(set.name, vector), pack.calibration(set.name))))]));
}

function expectSameScores(served: Map<LabelSetName, SetScores>, expected: Map<LabelSetName, number[]>): void {
  expect([...served.keys()]).toEqual([...expected.keys()]);
  for (const [name, want] of expected) {
    const got = Array.from(served.get(name)!.probs);
    expect(got).toHaveLength(want.length);
    const worst = Math.max(...got.map((p, i) => Math.abs(p - want[i]!)));
    expect(worst, name).toBeLessThan(1e-5);
  }
}

describe('label scores as one matrix product', () => {
  it('a head replaces the zero-shot scores of its set only; a batch and concurrent callers each get their own column', async () => {
    const model = config.models['zlm-v1-moderation-edge']!;
    const pack = await backend.packs.pack(model);
    const examples: Example[] = Array.from({ length: 60 }, (_, i) => ({
      line: i + 1,
      text: `${TEXTS[i % 3]} ${i}`,
      labels: i % 3 === 1 ? ['violence'] : i % 3 === 2 ? ['harassment'] : [],
    }));
    const { vectors } = await pack.backbone.embed(examples.map((e) => e.text));
    const { heads } = trainHeads(pack, vectors, targets(pack, examples, 'synthetic.jsonl'));
    // A calibrated head and a recalibrated zero-shot set: each row's temperature and bias
    // (and the head's bias) must reach the served probabilities.
    const calibration = { moderation: { temperature: 0.7, bias: 0.3 }, unsafe: { temperature: 0.08, bias: -4 } };
    await writePackChanges(pack, {
      heads: new Map([['moderation', heads.get('moderation')!]]),
      manifest: (m) => ({ ...m, calibration: { ...m.calibration, ...calibration } }),
    });

    const trained = await backend.packs.pack(model);
    const probe = (await trained.backbone.embed(TEXTS)).vectors;
    const batch = await trained.scoreVectors(probe);
    const single = await Promise.all(probe.map((v) => trained.scoreVector(v)));
    probe.forEach((v, n) => {
      const expected = offline(trained, v);
      expectSameScores(batch[n]!, expected);
      expectSameScores(single[n]!, expected);
    });
    expect([batch[0]!.get('moderation')!.trained, batch[0]!.get('unsafe')!.trained]).toEqual([true, false]);
    expect([trained.calibration('moderation'), trained.calibration('unsafe')]).toEqual([calibration.moderation, calibration.unsafe]);
    // Labels the head was not trained on score 0; the zero-shot set scores every label.
    const moderation = batch[1]!.get('moderation')!;
    expect(moderation.probs[moderation.set.labels.findIndex((l) => l.key === 'sexual/minors')]).toBe(0);
    expect(batch[1]!.get('unsafe')!.probs[0]).toBeGreaterThan(0);
    // Texts that differ score differently: each caller reads its own column.
    expect(Array.from(single[1]!.get('moderation')!.probs)).not.toEqual(Array.from(single[2]!.get('moderation')!.probs));
    // `only` leaves the other sets out.
    expect([...(await trained.scoreVector(probe[0]!, ['unsafe'])).keys()]).toEqual(['unsafe']);
    expect(await trained.scoreVectors([])).toEqual([]);
  });

  it('an IAB pack: both taxonomies in one product, rolled up like the offline path', async () => {
    const pack = await backend.packs.pack(config.models['zlm-v1-iab-classify-edge']!);
    const probe = (await pack.backbone.embed(TEXTS.slice(0, 2))).vectors;
    const served = await pack.scoreVectors(probe);
    probe.forEach((v, n) => expectSameScores(served[n]!, offline(pack, v)));
    const content = served[0]!.get('iab_content_2_2')!;
    content.set.labels.forEach((label, i) => {
      if (label.parent !== -1) expect(content.probs[label.parent]!).toBeGreaterThanOrEqual(content.probs[i]!);
    });
  });
});

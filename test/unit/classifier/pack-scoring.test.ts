import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultManifest, readManifest, validateManifest } from '../../../src/inference/classifier/manifest.js';
import { readHead } from '../../../src/inference/classifier/heads.js';
import { findLabel, type LabelSet } from '../../../src/domain/shared/classification/label-sets.js';
import { labelSet } from '../../../src/inference/classifier/label-set-loader.js';
import { calibrate, matVec, rollUp, topK } from '../../../src/inference/classifier/scoring.js';
import { sigmoid } from '../../../src/domain/shared/classification/calibration.js';
import { content10Scores, iabResult } from '../../../src/inference/classifier/outputs.js';
import type { PackScores } from '../../../src/inference/classifier/pack.js';

describe('pack manifest validation', () => {
  const good = defaultManifest('zlm-v1-moderation-edge');

  it('accepts the default manifest of every pack', () => {
    for (const id of ['zlm-v1-iab-classify-edge', 'zlm-v2-iab-classify-edge-enriched', 'zlm-v1-multi-iab-classify', 'zlm-v1-iab-domain-classifier', 'zlm-v1-moderation-edge']) {
      expect(validateManifest(id, defaultManifest(id))).toMatchObject({ id });
    }
  });

  it.each([
    [{ ...good, top_k: 0 }, 'zlm-v1-moderation-edge/pack.json: key top_k: Expected integer to be greater or equal to 1'],
    [{ ...good, backbone: {} }, 'key backbone.model: Expected required property'],
    [{ ...good, kind: 'other' }, 'key kind:'],
    [{ ...good, extra: 1 }, 'key extra: Unexpected property'],
    [{ ...good, id: 'zlm-v1-iab-classify-edge' }, 'key id: is "zlm-v1-iab-classify-edge", but the pack directory is zlm-v1-moderation-edge'],
    [{ ...good, heads: { user_intent: 'heads/x.json' } }, "key heads.user_intent: is not one of this pack's label_sets (moderation, unsafe)"],
    [{ ...good, heads: { moderation: '../../etc/passwd' } }, 'key heads: ../../etc/passwd must be a path inside the pack'],
    [{ ...good, thresholds: { spam: 0.5 } }, 'key thresholds.spam: is not a moderation category'],
    [{ ...good, outputs: { audience: { top_k: 0 } } }, 'key outputs.audience.top_k: Expected integer to be greater or equal to 1'],
    [{ ...good, outputs: { colours: {} } }, 'key outputs.colours: Unexpected property'],
    [{ ...good, thresholds: { hate: 2 } }, 'key thresholds.hate: Expected number to be less or equal to 1'],
    [{ ...good, label_sets: ['moderation'], calibration: {} }, 'key label_sets: a moderation pack needs the moderation and unsafe label sets'],
  ])('names the file and key of a bad manifest (%#)', (raw, message) => {
    expect(() => validateManifest('zlm-v1-moderation-edge', raw)).toThrow(message);
  });

  it('a manifest or head file that is not JSON is named with the place of the fault, in the same words on every Node', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sluice-pack-json-'));
    mkdirSync(path.join(dir, 'heads'));
    writeFileSync(path.join(dir, 'pack.json'), '{\n  "id": "zlm-v1-moderation-edge",\n}');
    writeFileSync(path.join(dir, 'heads', 'moderation.json'), '{"format": 1, "dim": NaN}');
    await expect(readManifest(dir, 'zlm-v1-moderation-edge')).rejects.toThrow(
      new Error("zlm-v1-moderation-edge/pack.json: key (root): not valid JSON (line 3, column 1: Expected a property name in double quotes after ',', found '}'; JSON allows no trailing comma)"),
    );
    await expect(readHead(path.join(dir, 'heads', 'moderation.json'), 'zlm-v1-moderation-edge', { fingerprint: 'f', dim: 4 })).rejects.toThrow(
      new Error("zlm-v1-moderation-edge/heads/moderation.json: not valid JSON (line 1, column 22: Expected a value, found 'NaN'; JSON has no NaN or Infinity)"),
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('scoring', () => {
  it('matVec is the matrix-vector product, for row counts on and off its block of four', () => {
    const m = { rows: 2, dim: 5, data: Float32Array.from([1, 2, 3, 4, 5, -1, 0, 0, 0, 1]) };
    expect(Array.from(matVec(m, Float32Array.from([1, 1, 1, 1, 2])))).toEqual([20, 1]);
    const rows = 7;
    const dim = 3;
    const data = Float32Array.from({ length: rows * dim }, (_, i) => (i % 5) - 2);
    const x = Float32Array.from([1, -2, 0.5]);
    const expected = Array.from({ length: rows }, (_, r) => data[r * 3]! * 1 + data[r * 3 + 1]! * -2 + data[r * 3 + 2]! * 0.5);
    expect(Array.from(matVec({ rows, dim, data }, x))).toEqual(expected);
  });

  it('calibrates with temperature and bias', () => {
    const p = calibrate(Float32Array.from([0.3, 0.5]), { temperature: 0.05, bias: -6 });
    expect(p[0]).toBeCloseTo(0.5, 6);
    expect(p[1]).toBeCloseTo(sigmoid(4), 6);
  });

  it('rolls a branch up: every ancestor scores at least its best descendant', () => {
    const set = labelSet('iab_content_2_2');
    const leaf = findLabel(set, 'Healthy Living > Wellness > Physical Therapy');
    const probs = new Float32Array(set.labels.length).fill(0.01);
    probs[leaf] = 0.9;
    rollUp(set, probs);
    const wellness = set.labels[leaf]!.parent;
    const healthy = set.labels[wellness]!.parent;
    expect([probs[wellness], probs[healthy]].map((x) => Math.round(x! * 100))).toEqual([90, 90]);
    expect(set.labels[healthy]!.parent).toBe(-1);
    expect(probs[findLabel(set, 'Automotive')]).toBeCloseTo(0.01, 6);
  });

  it('a flat set does not roll up', () => {
    const set: LabelSet = labelSet('moderation');
    const probs = Float32Array.from(set.labels.map((_, i) => i / 20));
    expect(Array.from(rollUp(set, probs.slice()))).toEqual(Array.from(probs));
  });

  it('scores Content 1.0 codes from the 2.2 nodes they map to, parents from children', () => {
    const set = labelSet('iab_content_2_2');
    const probs = new Float32Array(set.labels.length);
    probs[findLabel(set, '379')] = 0.8; // News and Politics ← IAB12 (News)
    const { nodes, scores } = content10Scores(set, probs);
    const at = (code: string) => scores[nodes.findIndex((n) => n.code === code)];
    expect(at('IAB12')).toBeCloseTo(0.8, 6);
    expect(at('IAB19')).toBe(0);
  });

  it('topK picks the best k at or above the minimum, best first', () => {
    const v = Float32Array.from([0.1, 0.9, 0.5, 0.7, 0.05, 0.95]);
    expect(topK(v, 3, 0)).toEqual([5, 1, 3]);
    expect(topK(v, 10, 0.5)).toEqual([5, 1, 3, 2]);
    expect(topK(v, 3, 0, Uint8Array.from([1, 0, 1, 1, 1, 0]))).toEqual([3, 2, 0]);
    expect(topK(v, 0, 0)).toEqual([]);
  });

  it('topK agrees with sorting every allowed value at or above the minimum (ties: the earlier index first)', () => {
    const values = fc.array(fc.float({ noNaN: true, min: 0, max: 1 }), { maxLength: 60 });
    const pick = fc.tuple(values, fc.integer({ min: 1, max: 12 }), fc.float({ noNaN: true, min: 0, max: 1 }), fc.array(fc.boolean(), { maxLength: 60 }));
    fc.assert(
      fc.property(pick, ([raw, k, min, allow]) => {
        const v = Float32Array.from(raw);
        const mask = Uint8Array.from(v, (_, i) => (allow[i] === false ? 0 : 1));
        const expected = [...v.keys()]
          .filter((i) => v[i]! >= min && mask[i] === 1)
          .sort((a, b) => v[b]! - v[a]! || a - b)
          .slice(0, k);
        expect(topK(v, k, min, mask)).toEqual(expected);
      }),
    );
  });

  it('IAB lists never name the Sensitive Topics branch: their ids are integers (digest §1.3), the branch answers brand safety', () => {
    const content = labelSet('iab_content_2_2');
    const audience = labelSet('iab_audience_1_1');
    const probs = new Float32Array(content.labels.length).fill(0.01);
    content.labels.forEach((l, i) => {
      if (l.path[0] === 'Sensitive Topics') probs[i] = 0.99;
    });
    probs[findLabel(content, 'Automotive')] = 0.9;
    const scores: PackScores = {
      vector: new Float32Array(0),
      tokens: 0,
      sets: new Map([
        ['iab_content_2_2', { set: content, probs, trained: false }],
        ['iab_audience_1_1', { set: audience, probs: new Float32Array(audience.labels.length).fill(0.01), trained: false }],
      ]),
    };
    const enrichment = { topics: [], keywords: [], intent: { name: '', category: 'informational', score: 1 } };
    type Entry = { id?: unknown; parent_id?: unknown; name: string };
    const multi = iabResult(defaultManifest('zlm-v1-multi-iab-classify'), scores, enrichment) as { content: { iab_2_2: Entry[] } };
    expect(multi.content.iab_2_2[0]).toMatchObject({ id: 1, parent_id: 0, name: 'Automotive' });
    for (const e of multi.content.iab_2_2) expect([Number.isInteger(e.id), Number.isInteger(e.parent_id)]).toEqual([true, true]);
    const edge = iabResult(defaultManifest('zlm-v1-iab-classify-edge'), scores, null) as { content: { iab_2_2: Entry[] } };
    expect(edge.content.iab_2_2[0]!.name).toBe('Automotive');
    expect(edge.content.iab_2_2.map((e) => e.name)).not.toContain('Sensitive Topics');
  });
});

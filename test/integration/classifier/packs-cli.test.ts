/**
 * `sluice models pull|list` for a pack and `sluice packs train|calibrate|eval` through
 * the real CLI, on the test backbone copied into MODELS_DIR by hand (no network), with
 * the example labelled file docs/models.md documents.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSluice } from '../../helpers/cli.js';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestModels } from '../../fixtures/model-builders/index.js';

const REPO = path.resolve(import.meta.dirname, '../../..');
const EXAMPLE = path.join(REPO, 'examples/packs/moderation-labelled.jsonl');
const ID = 'zlm-v1-moderation-edge';

describe('sluice packs CLI', { timeout: 180_000 }, () => {
  const modelsDir = buildTestModels(['all-minilm-l6-v2']);
  const work = mkdtempSync(path.join(tmpdir(), 'sluice-packs-cli-'));
  afterAll(() => {
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  const sluice = (...args: string[]) =>
    runSluice(args, { cwd: work, env: { DATA_DIR: work, MODELS_DIR: modelsDir, HF_ENDPOINT: 'http://127.0.0.1:9' }, timeoutMs: 120_000 });

  it('models pull assembles the pack from a backbone already in MODELS_DIR, and models list shows it', () => {
    const before = JSON.parse(sluice('models', 'list', '--json').stdout) as { id: string; ready: boolean; detail: string }[];
    expect(before.find((m) => m.id === ID)).toMatchObject({ ready: true, detail: 'classifier pack on all-minilm-l6-v2 (assembled on first use)' });
    const pulled = sluice('models', 'pull', ID);
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout)).toEqual({
      model: ID,
      backbone: 'all-minilm-l6-v2',
      label_sets: ['moderation', 'unsafe'],
      label_cache: [{ set: 'moderation', outcome: 'computed' }, { set: 'unsafe', outcome: 'computed' }],
      backbone_pull: null,
    });
    const again = JSON.parse(sluice('models', 'pull', ID).stdout);
    expect(again.label_cache).toEqual([{ set: 'moderation', outcome: 'hit' }, { set: 'unsafe', outcome: 'hit' }]);
    const after = JSON.parse(sluice('models', 'list', '--json').stdout) as { id: string; detail: string }[];
    expect(after.find((m) => m.id === ID)!.detail).toBe('classifier pack on all-minilm-l6-v2');
  });

  it('train, calibrate and eval run on the example file and change the pack as they say', () => {
    const trained = sluice('packs', 'train', ID, EXAMPLE, '--json');
    expect(trained.status, trained.stderr).toBe(0);
    const report = JSON.parse(trained.stdout);
    expect(report.sets.map((s: { set: string }) => s.set)).toEqual(['moderation', 'unsafe']);
    expect(Object.keys(report.sets[0].labels[0])).toEqual(['label', 'support', 'precision', 'recall', 'f1']);
    const manifest = JSON.parse(readFileSync(path.join(modelsDir, ID, 'pack.json'), 'utf8'));
    expect(Object.keys(manifest.heads)).toEqual(['moderation', 'unsafe']);
    expect(readdirSync(path.join(modelsDir, ID, 'heads')).sort()).toEqual(Object.values(manifest.heads).map((f) => path.basename(f as string)).sort());

    const calibrated = sluice('packs', 'calibrate', ID, EXAMPLE, '--target-recall', '1', '--json');
    expect(calibrated.status, calibrated.stderr).toBe(0);
    const cal = JSON.parse(calibrated.stdout);
    expect(cal.sets[0]).toMatchObject({ set: 'moderation', calibration: { temperature: expect.any(Number), bias: expect.any(Number) } });
    expect(Object.keys(cal.sets[0].before)).toEqual(['pairs', 'accuracy', 'brier', 'ece']);
    const reports = readdirSync(path.join(modelsDir, ID, 'reports'));
    expect(reports.filter((f) => f.endsWith('.svg'))).toHaveLength(2);
    const svg = readFileSync(path.join(modelsDir, ID, 'reports', reports.find((f) => f.endsWith('-moderation.svg'))!), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('before: ECE');
    const afterCal = JSON.parse(readFileSync(path.join(modelsDir, ID, 'pack.json'), 'utf8'));
    expect(afterCal.calibration.moderation).toEqual(cal.sets[0].calibration);
    expect(Object.keys(afterCal.thresholds)).toHaveLength(13);

    const evaluated = sluice('packs', 'eval', ID, EXAMPLE, '--json');
    expect(evaluated.status, evaluated.stderr).toBe(0);
    const ev = JSON.parse(evaluated.stdout);
    expect(ev.sets[0].ece).toBeCloseTo(cal.sets[0].after.ece, 6);
    expect(readFileSync(path.join(modelsDir, ID, 'pack.json'), 'utf8')).toBe(JSON.stringify(afterCal, null, 2) + '\n');
  });

  it('names the line and label of a bad labelled file, and changes nothing', () => {
    const bad = path.join(work, 'bad.jsonl');
    writeFileSync(bad, '{"text": "fine", "labels": []}\n{"text": "x", "labels": ["spam"]}\n');
    const manifest = readFileSync(path.join(modelsDir, ID, 'pack.json'), 'utf8');
    const result = sluice('packs', 'train', ID, bad);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('error: bad.jsonl line 2: label "spam" is not in this pack\'s label sets (moderation, unsafe)\n');
    expect(readFileSync(path.join(modelsDir, ID, 'pack.json'), 'utf8')).toBe(manifest);
    expect(existsSync(path.join(modelsDir, ID, 'pack.json'))).toBe(true);
  });
});

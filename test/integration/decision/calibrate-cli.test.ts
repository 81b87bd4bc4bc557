/**
 * `sluice calibrate` through the real CLI on the random-weight moderation pack: labelled
 * nouls and choices are answered in process, one calibrator per type is fitted and
 * stored in decision-calibration.json (read by the route), with reliability diagrams;
 * a bad line is refused naming its line.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSluice } from '../../helpers/cli.js';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestModels } from '../../fixtures/model-builders/index.js';

const ID = 'zlm-v1-moderation-edge';

describe('sluice calibrate', { timeout: 180_000 }, () => {
  const modelsDir = buildTestModels(['all-minilm-l6-v2']);
  const work = mkdtempSync(path.join(tmpdir(), 'sluice-calibrate-cli-'));
  afterAll(() => {
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  const sluice = (...args: string[]) =>
    runSluice(args, { cwd: work, env: { DATA_DIR: work, MODELS_DIR: modelsDir, HF_ENDPOINT: 'http://127.0.0.1:9' }, timeoutMs: 150_000 });

  it('fits a calibrator per question type, stores it atomically beside the pack, and writes reliability diagrams', () => {
    const texts = ['I will hurt you badly.', 'What a lovely day for a picnic.', 'You people are vermin.', 'The recipe needs two eggs.'];
    const lines: string[] = [];
    texts.forEach((state, i) => {
      lines.push(JSON.stringify({ state, question: { type: 'noul', instructions: 'violence' }, answer: i === 0 }));
      lines.push(JSON.stringify({ state, question: { type: 'choice', criteria: { harmful: 'abusive or violent', harmless: null } }, answer: i % 2 === 0 ? 'harmful' : 'harmless' }));
    });
    const file = path.join(work, 'labelled.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = sluice('calibrate', ID, file);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^noul: temperature \d+\.\d{4} {2}bias -?\d+\.\d{4} {2}\(4 answers\)$/m);
    expect(run.stdout).toMatch(/^choice: temperature \d+\.\d{4} {2}bias 0\.0000 {2}\(4 answers\)$/m);
    expect(run.stdout).toMatch(/^ {2}before: accuracy \d\.\d{4} {2}brier \d\.\d{4} {2}ece\(15 bins\) \d\.\d{4}$/m);
    expect(run.stdout).toContain(`calibrators written to ${ID}/decision-calibration.json`);
    const stored = JSON.parse(readFileSync(path.join(modelsDir, ID, 'decision-calibration.json'), 'utf8'));
    expect(Object.keys(stored).sort()).toEqual(['choice', 'noul']);
    expect(stored.noul.temperature).toBeGreaterThan(0);
    expect(stored.choice.bias).toBe(0);
    const reports = readdirSync(path.join(modelsDir, ID, 'reports')).filter((f) => f.startsWith('decision-calibration-'));
    expect(reports.filter((f) => f.endsWith('-noul.svg'))).toHaveLength(1);
    expect(reports.filter((f) => f.endsWith('-choice.svg'))).toHaveLength(1);
    expect(readdirSync(path.join(modelsDir, ID)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a line whose answer does not fit its question, naming the line, and writes nothing', () => {
    const target = path.join(modelsDir, ID, 'decision-calibration.json');
    const before = existsSync(target) ? readFileSync(target, 'utf8') : null;
    const file = path.join(work, 'bad.jsonl');
    writeFileSync(
      file,
      [JSON.stringify({ state: 'x', question: { type: 'noul' }, answer: true }), JSON.stringify({ state: 'y', question: { type: 'score', criteria: ['a', 'b'] }, answer: 2 })].join('\n'),
    );
    const run = sluice('calibrate', ID, file);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('error: bad.jsonl line 2: answer must be a level index for a score question, got 2');
    const invalid = path.join(work, 'invalid.jsonl');
    writeFileSync(invalid, JSON.stringify({ state: 'x', question: { type: 'choice', criteria: {} }, answer: 'a' }));
    const refused = sluice('calibrate', ID, invalid);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('error: invalid.jsonl line 1: question.criteria: Dictionary should have at least 1 item after validation, not 0');
    expect(existsSync(target) ? readFileSync(target, 'utf8') : null).toBe(before);
  });
});

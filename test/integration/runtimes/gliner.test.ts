/**
 * GLiNER span extraction on a generated model with the real export's inputs and
 * outputs: PII extraction and redaction (gliner-multi-pii-v1), and gliner2-base-v1's
 * ner / json / classification use cases, through the backend and the HTTP routes.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { PII_CATEGORIES } from '../../../src/inference/backends/onnx/gliner/pii.js';
import type { InferenceBackend } from '../../../src/domain/models/inference-backend.port.js';
import type { ModelConfig } from '../../../src/config/schema.js';

let server: TestServer;
let modelsDir: string;
let key: string;
let backend: InferenceBackend;
let pii: ModelConfig;
let g2: ModelConfig;

const TEXT = 'Hello Jane Doe, call me at 415-555-0134 or email hi@example.com about the meeting in London tomorrow.';
const ctx = () => ({ requestId: 'req_test', signal: new AbortController().signal });

beforeAll(async () => {
  modelsDir = buildTestModels(['gliner-multi-pii-v1', 'gliner2-base-v1']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
  const registry = server.core.registry;
  pii = registry.find('gliner-multi-pii-v1')!;
  g2 = registry.find('gliner2-base-v1')!;
  backend = await registry.backendFor(pii, 'runTask');
});

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const runPii = async (options: Record<string, unknown>, input = TEXT) =>
  (await backend.runTask!({ ...ctx(), model: pii, input, labels: null, options })).result as any;

function checkEntities(result: any, input: string, threshold: number) {
  let lastEnd = -1;
  for (const e of result.entities) {
    expect(Object.keys(e)).toEqual(['text', 'label', 'start', 'end', 'score']);
    expect(input.slice(e.start, e.end)).toBe(e.text);
    expect(e.start).toBeGreaterThanOrEqual(lastEnd); // in order, never overlapping
    expect(e.score).toBeGreaterThanOrEqual(threshold);
    lastEnd = e.end;
  }
  const byLabel: Record<string, string[]> = {};
  for (const e of result.entities) if (!(byLabel[e.label] ??= []).includes(e.text)) byLabel[e.label]!.push(e.text);
  expect(result.entities_by_label).toEqual(byLabel);
}

describe('gliner-multi-pii-v1', () => {
  it('extracts entities with exact character offsets and no redacted_text', async () => {
    const result = await runPii({ threshold: 0.05 });
    expect(result.entities.length).toBeGreaterThan(0);
    expect(result.redacted_text).toBeUndefined();
    checkEntities(result, TEXT, 0.05);
    const all = Object.values(PII_CATEGORIES).flat();
    for (const e of result.entities) expect(all).toContain(e.label);
  });

  it('applies the threshold and limits labels to the requested categories', async () => {
    expect((await runPii({ threshold: 1 })).entities).toEqual([]);
    const contact = await runPii({ threshold: 0, categories: ['contact'] });
    expect(contact.entities.length).toBeGreaterThan(0);
    for (const e of contact.entities) expect(PII_CATEGORIES.contact).toContain(e.label);
  });

  it('redacts with label placeholders or a character mask', async () => {
    const labelled = await runPii({ usecase: 'redact', threshold: 0.05 });
    expect(Object.keys(labelled)[0]).toBe('redacted_text');
    let expected = TEXT;
    for (const e of [...labelled.entities].reverse()) {
      expected = expected.slice(0, e.start) + `[${e.label.toUpperCase().replaceAll(' ', '_')}]` + expected.slice(e.end);
    }
    expect(labelled.redacted_text).toBe(expected);
    const masked = await runPii({ usecase: 'redact', threshold: 0.05, mask: 'char', replacement_char: '#' });
    expect(masked.redacted_text).toHaveLength(TEXT.length);
    for (const e of masked.entities) expect(masked.redacted_text.slice(e.start, e.end)).toBe('#'.repeat(e.end - e.start));
  });

  it('covers long texts beyond one model window', async () => {
    const long = Array.from({ length: 900 }, (_, i) => (i % 7 === 0 ? 'Jane' : 'word')).join(' ');
    const result = await runPii({ threshold: 0, categories: ['identity'] }, long);
    checkEntities(result, long, 0);
    expect(Math.max(...result.entities.map((e: any) => e.start))).toBeGreaterThan(long.length / 2);
  });

  it('refuses bad options with 400', async () => {
    for (const options of [{ categories: ['bogus'] }, { threshold: 2 }, { mask: 'weird' }, { usecase: 'x' }, { replacement_char: '##' }]) {
      await expect(runPii(options)).rejects.toMatchObject({ kind: 'invalid_request' });
    }
  });

  it('answers on /v1/chat/completions with options in metadata', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'gliner-multi-pii-v1', messages: [{ role: 'user', content: TEXT }], metadata: { usecase: 'redact', threshold: 0.05 } },
    });
    expect(res.status).toBe(200);
    const result = JSON.parse(res.body.choices[0].message.content);
    expect(typeof result.redacted_text).toBe('string');
    checkEntities(result, TEXT, 0.05);
  });
});

describe('gliner2-base-v1', () => {
  const run = async (options: Record<string, unknown>, labels: string[] | null = null) =>
    (await backend.runTask!({ ...ctx(), model: g2, input: TEXT, labels, options })).result as any;

  it('ner: every label is a key of entities', async () => {
    const result = await run({ labels: ['person', 'city'], threshold: 0 });
    expect(Object.keys(result)).toEqual(['entities']);
    expect(Object.keys(result.entities)).toEqual(['person', 'city']);
    for (const texts of Object.values(result.entities) as string[][]) for (const t of texts) expect(TEXT).toContain(t);
  });

  it('json: one record per group with str fields or null and list fields', async () => {
    const result = await run({ usecase: 'json', threshold: 0.5, schema: { contact: ['name::str::Full name', 'email::str::Email address', 'phones::list::Phone numbers'] } });
    const record = result.data.contact[0];
    expect(Object.keys(record)).toEqual(['name', 'email', 'phones']);
    expect(record.name === null || TEXT.includes(record.name)).toBe(true);
    expect(Array.isArray(record.phones)).toBe(true);
  });

  it('classification: one of the candidate labels per task', async () => {
    const result = await run({ usecase: 'classification', schema: { sentiment: ['positive', 'negative'], topic: ['travel', 'sports'] } });
    expect(['positive', 'negative']).toContain(result.classification.sentiment);
    expect(['travel', 'sports']).toContain(result.classification.topic);
  });

  it('ner needs labels; a bad schema is a 400', async () => {
    await expect(run({})).rejects.toMatchObject({ kind: 'invalid_request', param: 'metadata.labels' });
    await expect(run({ usecase: 'json', schema: ['x'] })).rejects.toMatchObject({ kind: 'invalid_request' });
    await expect(run({ usecase: 'json', schema: { g: ['a::int'] } })).rejects.toMatchObject({ kind: 'invalid_request' });
  });

  it('answers on /v1/responses', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', {
      key,
      body: { model: 'gliner2-base-v1', input: TEXT, metadata: { usecase: 'ner', labels: ['person'], threshold: 0.3 } },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(JSON.parse(res.body.output[0].content[0].text).entities)).toEqual(['person']);
  });
});

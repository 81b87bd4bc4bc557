/**
 * The zlm-* classifier packs through the HTTP routes on the random-weight MiniLM-shaped
 * test backbone: every output field against digest §1.3, moderation's 13 keys in order,
 * assembly on first use (manifest and label-embedding cache written), and 503
 * `model_not_available` naming what to pull when the backbone is missing.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { findLabel, MODERATION_LABELS } from '../../../src/domain/shared/classification/label-sets.js';
import type { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';

let server: TestServer;
let modelsDir: string;
let key: string;

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

async function classify(model: string, input: string, route: 'chat' | 'responses' = 'chat') {
  const res =
    route === 'chat'
      ? await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: input }] } })
      : await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model, input } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const text = route === 'chat' ? res.body.choices[0].message.content : res.body.output[0].content[0].text;
  return { body: res.body, result: JSON.parse(text as string) as Record<string, any> };
}

const isScore = (x: unknown) => typeof x === 'number' && x >= 0 && x <= 1;
const sortedDesc = (xs: { score: number }[]) => xs.every((x, i) => i === 0 || xs[i - 1]!.score >= x.score);

describe('zlm-v1-iab-classify-edge', () => {
  it('is assembled on first use: manifest and label-embedding cache written into the pack', async () => {
    const { result, body } = await classify('zlm-v1-iab-classify-edge', 'The new smartphone has a faster chip and a better camera.');
    const dir = path.join(modelsDir, 'zlm-v1-iab-classify-edge');
    const manifest = JSON.parse(readFileSync(path.join(dir, 'pack.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 1, id: 'zlm-v1-iab-classify-edge', kind: 'iab-edge', backbone: { model: 'all-minilm-l6-v2' } });
    expect(existsSync(path.join(dir, 'label-cache', 'iab_content_2_2.f32'))).toBe(true);
    expect(existsSync(path.join(dir, 'label-cache', 'iab_audience_1_1.f32'))).toBe(true);
    expect(Object.keys(result)).toEqual(['audience', 'content']);
    expect(Object.keys(result.content)).toEqual(['iab_1_0', 'iab_2_2']);
    for (const list of [result.audience, result.content.iab_1_0, result.content.iab_2_2]) {
      expect(list.length).toBeGreaterThan(0);
      expect(list.length).toBeLessThanOrEqual(5);
      for (const entry of list) {
        expect(Object.keys(entry)).toEqual(['name', 'score']);
        expect(typeof entry.name).toBe('string');
        expect(isScore(entry.score)).toBe(true);
        expect(entry.score).toBe(Math.round(entry.score * 10_000) / 10_000);
      }
      expect(sortedDesc(list)).toBe(true);
    }
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('answers the same JSON string in the responses output text', async () => {
    const input = 'Football scores from the weekend league games.';
    const chat = await classify('zlm-v1-iab-classify-edge', input);
    const responses = await classify('zlm-v1-iab-classify-edge', input, 'responses');
    expect(responses.result).toEqual(chat.result);
  });
});

function expectTreeEntry(entry: Record<string, any>) {
  const tiers = Object.keys(entry).filter((k) => /^tier\d_name$/.test(k));
  expect(Object.keys(entry)).toEqual(['id', 'parent_id', 'name', ...tiers, 'score']);
  expect(Number.isInteger(entry.id)).toBe(true);
  expect(Number.isInteger(entry.parent_id)).toBe(true);
  expect(tiers[0]).toBe('tier1_name');
  if (tiers.length === 1) expect(entry.parent_id).toBe(0);
  else expect(entry.parent_id).not.toBe(0);
  expect(entry[tiers[tiers.length - 1]!]).toBe(entry.name);
  expect(isScore(entry.score)).toBe(true);
}

function expectEnrichedFields(result: Record<string, any>) {
  for (const t of result.topics) {
    expect(Object.keys(t)).toEqual(['name', 'score']);
    expect(t.name).toBe(t.name.toLowerCase());
    expect(isScore(t.score)).toBe(true);
  }
  expect(result.topics.length).toBeGreaterThan(0);
  expect(result.keywords.length).toBeGreaterThan(0);
  expect(result.keywords.every((k: unknown) => typeof k === 'string' && !k.includes(' '))).toBe(true);
  expect(Object.keys(result.user_intent)).toEqual(['name', 'category', 'score']);
  expect(['informational', 'navigational', 'transactional', 'commercial']).toContain(result.user_intent.category);
  expect(result.user_intent.score).toBeGreaterThanOrEqual(0.25);
}

describe.each(['zlm-v2-iab-classify-edge-enriched', 'zlm-v1-multi-iab-classify'])('%s', (model) => {
  it('answers ids, parent ids, tier names, topics, keywords and user intent', async () => {
    const { result } = await classify(model, 'Mastering technology quietly reshaped the rhythm of everyday life for people.');
    expect(Object.keys(result)).toEqual(['audience', 'content', 'topics', 'keywords', 'user_intent']);
    expect(result.audience.length).toBeGreaterThan(0);
    for (const a of result.audience) expectTreeEntry(a);
    expect(result.audience.every((a: any) => ['Demographic', 'Interest', 'Purchase Intent*'].includes(a.tier1_name))).toBe(true);
    for (const c of result.content.iab_1_0) {
      expect(Object.keys(c)).toEqual(['code', 'name', 'tier', 'parent_code', 'score']);
      expect(c.code).toMatch(/^IAB\d+(-\d+)?$/);
      expect(c.tier).toBe(c.code.includes('-') ? 2 : 1);
      expect(c.parent_code).toBe(c.tier === 1 ? null : c.code.split('-')[0]);
    }
    for (const c of result.content.iab_2_2) expectTreeEntry(c);
    expectEnrichedFields(result);
    expect(result.user_intent.name).toBe('mastering technology quietly reshaped rhythm everyday life people');
  });
});

describe('output limits', () => {
  it('top_k and min_score per output list override the pack-wide ones', async () => {
    const model = 'zlm-v2-iab-classify-edge-enriched';
    const file = path.join(modelsDir, model, 'pack.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...manifest, top_k: 4, min_score: 0, outputs: { audience: { top_k: 1 }, iab_1_0: { min_score: 1 }, keywords: { top_k: 2 } } }));
    const { result } = await classify(model, 'Mastering technology quietly reshaped the rhythm of everyday life for people.');
    expect(result.audience).toHaveLength(1);
    expect(result.content.iab_1_0).toEqual([]);
    expect(result.content.iab_2_2).toHaveLength(4);
    expect(result.keywords).toHaveLength(2);
    expect(result.topics).toHaveLength(4);
  });
});

describe('zlm-v1-iab-domain-classifier', () => {
  it('reads the domain as words and answers content, topics, keywords and intent, no audience', async () => {
    const { result } = await classify('zlm-v1-iab-domain-classifier', 'https://www.news.example.co.uk/sports-weather/traveltime.html');
    expect(Object.keys(result)).toEqual(['content', 'topics', 'keywords', 'user_intent']);
    for (const list of [result.content.iab_1_0, result.content.iab_2_2]) for (const e of list) expect(Object.keys(e)).toEqual(['name', 'score']);
    expectEnrichedFields(result);
    // The words the backbone saw: the domain and path split, www and the suffix dropped.
    expect(result.user_intent.name).toBe('news example sports weather travel time');
  });
});

describe('the in-process API the decision route reads', () => {
  it('scores every label set with its tree, finds labels by path, and scores labels outside the pack zero-shot', async () => {
    const registry = server.core.registry;
    const model = registry.find('zlm-v1-iab-classify-edge')!;
    const backend = (await registry.backendFor(model, 'runTask')) as OnnxBackend;
    const scores = await backend.scorePack(model, 'Football scores from the weekend league games.', undefined, ['sports', 'cooking']);
    const content = scores.sets.get('iab_content_2_2')!;
    expect([...scores.sets.keys()]).toEqual(['iab_content_2_2', 'iab_audience_1_1']);
    expect(content.probs).toHaveLength(content.set.labels.length);
    const soccer = findLabel(content.set, 'sports > soccer');
    expect(content.set.labels[soccer]!.path).toEqual(['Sports', 'Soccer']);
    // The parent covers its branch.
    expect(content.probs[content.set.labels[soccer]!.parent]).toBeGreaterThanOrEqual(content.probs[soccer]!);
    expect(scores.free).toHaveLength(2);
    for (const p of scores.free) expect(isScore(p)).toBe(true);
  });
});

describe('context length', () => {
  it('counts tokens with the backbone tokenizer: the domain classifier refuses more than 100', async () => {
    const long = `https://example.com/${Array.from({ length: 120 }, () => 'news').join('/')}`;
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'zlm-v1-iab-domain-classifier', messages: [{ role: 'user', content: long }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('context_length_exceeded');
    // The words the backbone reads: [CLS] example news ×120 [SEP].
    expect(res.body.error.message).toBe('Input exceeds max_tokens (100) for model: zlm-v1-iab-domain-classifier (the input has 123 tokens)');
  });
});

describe('POST /v1/moderations (zlm-v1-moderation-edge)', () => {
  it('answers all 13 categories in order, decisions from the thresholds, flagged from them', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/moderations', { key, body: { input: ['hello world', 'I will hurt you'] } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('zlm-v1-moderation-edge');
    expect(res.body.results).toHaveLength(2);
    const order = MODERATION_LABELS.map((c) => c.name);
    const manifest = JSON.parse(readFileSync(path.join(modelsDir, 'zlm-v1-moderation-edge', 'pack.json'), 'utf8'));
    for (const r of res.body.results) {
      expect(Object.keys(r.category_scores)).toEqual(order);
      expect(Object.keys(r.categories)).toEqual(order);
      for (const name of order) {
        expect(isScore(r.category_scores[name])).toBe(true);
        expect(r.categories[name]).toBe(r.category_scores[name] >= manifest.thresholds[name]);
      }
      expect(r.flagged).toBe(Object.values(r.categories).some(Boolean));
      // The binary head's overall score sits right after flagged.
      expect(Object.keys(r).slice(0, 2)).toEqual(['flagged', 'unsafe_score']);
      expect(isScore(r.unsafe_score)).toBe(true);
    }
  });

  it('follows the pack thresholds: a threshold of 0 flags every input', async () => {
    const file = path.join(modelsDir, 'zlm-v1-moderation-edge', 'pack.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    manifest.thresholds.violence = 0;
    writeFileSync(file, JSON.stringify(manifest));
    const res = await call(server.baseUrl, 'POST', '/v1/moderations', { key, body: { model: 'omni-moderation-latest', input: 'a calm afternoon' } });
    expect(res.status).toBe(200);
    expect(res.body.results[0].categories.violence).toBe(true);
    expect(res.body.results[0].flagged).toBe(true);
  });
});

describe('a broken or incomplete pack', () => {
  it('a manifest error answers 503 model_not_available naming the file and the key', async () => {
    const dir = path.join(modelsDir, 'zlm-v1-iab-classify-edge');
    const file = path.join(dir, 'pack.json');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(good), top_k: 0 }));
    try {
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'zlm-v1-iab-classify-edge', messages: [{ role: 'user', content: 'x' }] },
      });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('model_not_available');
      expect(res.body.error.message).toContain('zlm-v1-iab-classify-edge/pack.json: key top_k:');
      expect(res.body.error.message).not.toContain(modelsDir);
    } finally {
      writeFileSync(file, good);
    }
  });

  it('a pack whose backbone is missing answers 503 model_not_available naming what to pull', async () => {
    const empty = path.join(modelsDir, 'empty');
    mkdirSync(empty, { recursive: true });
    const bare = await startTestServer({ env: { MODELS_DIR: empty } });
    try {
      const { key: k } = await bare.newTenant({ balanceUsd: 1 });
      const res = await call(bare.baseUrl, 'POST', '/v1/moderations', { key: k, body: { input: 'hello' } });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'model_not_available', param: 'model' });
      expect(res.body.error.message).toContain('its backbone all-minilm-l6-v2 is not installed');
      expect(res.body.error.message).toContain('run `sluice models pull zlm-v1-moderation-edge` (it pulls all-minilm-l6-v2)');
    } finally {
      await bare.close();
    }
  });
});

/**
 * POST /v1/systemone on the random-weight MiniLM-shaped packs: answer shapes and order,
 * label-mapped answers equal to the pack's own scores (rule 3, roll-up), purchase intent
 * and brand safety (rule 4), zero-shot answers equal to the embedding scorer's softmax
 * (rule 5) with question texts embedded once and cached, mixed requests, usage, and the
 * route's statuses: 400/401/402/404/422 with their exact bodies.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';
import type { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import { ZERO_SHOT_CALIBRATION } from '../../../src/inference/classifier/manifest.js';

let server: TestServer;
let modelsDir: string;
let key: string;
const IAB = 'zlm-v1-iab-classify-edge';
const STATE = 'The new electric sedan has a longer range and a faster charger.';

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir, DECISION_DEFAULT_MODEL: IAB } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const decide = (body: unknown, k: string = key) => call(server.baseUrl, 'POST', '/v1/systemone', { key: k, body });

async function packOf(id: string) {
  const model = server.core.registry.find(id)!;
  const backend = (await server.core.registry.backendFor(model, id.includes('moderation') ? 'moderate' : 'runTask')) as OnnxBackend;
  return { model, backend, pack: await backend.decisionPack(model) };
}

async function contentScores(id: string, text: string) {
  const { model, backend } = await packOf(id);
  return backend.scorePack(model, text);
}

/** softmax(cos/T) of the state against `texts` on the pack's backbone: the embedding scorer, recomputed. */
async function zeroShot(id: string, state: string, texts: string[]) {
  const { pack } = await packOf(id);
  const { vectors } = await pack.backbone.embed([state, ...texts]);
  const dots = vectors.slice(1).map((v) => v.reduce((s, x, i) => s + x * vectors[0]![i]!, 0) / ZERO_SHOT_CALIBRATION.temperature);
  const top = Math.max(...dots);
  const w = dots.map((d) => Math.exp(d - top));
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

describe('answers', () => {
  it('keys answers by question name in request order, each with its type and shape; usage bills input only', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: {
        zeta: { type: 'noul', instructions: 'Is the reviewer happy with the car?' },
        alpha: { type: 'choice', instructions: 'Which powertrain?', criteria: { electric: 'battery powered', petrol: null, diesel: null } },
        mid: { type: 'score', instructions: 'How positive is it?', criteria: ['negative', 'neutral', 'positive'] },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('x-typesafe-request-id')).toBe(res.headers.get('x-request-id'));
    expect(Object.keys(res.body)).toEqual(['model', 'answers', 'usage']);
    expect(res.body.model).toBe(IAB);
    expect(Object.keys(res.body.answers)).toEqual(['zeta', 'alpha', 'mid']);
    const { zeta, alpha, mid } = res.body.answers;
    expect(Object.keys(zeta)).toEqual(['type', 'noul']);
    expect(zeta.type).toBe('noul');
    expect(zeta.noul).toBeGreaterThanOrEqual(0);
    expect(zeta.noul).toBeLessThanOrEqual(1);
    expect(Object.keys(alpha)).toEqual(['type', 'choice', 'confidence', 'probabilities']);
    expect(Object.keys(alpha.probabilities)).toEqual(['electric', 'petrol', 'diesel']);
    expect(Math.abs(sum(alpha.probabilities) - 1)).toBeLessThan(1e-6);
    const pMax = Math.max(...(Object.values(alpha.probabilities) as number[]));
    expect(alpha.probabilities[alpha.choice]).toBe(pMax);
    expect(alpha.confidence).toBeCloseTo((3 * pMax - 1) / 2, 12);
    expect(Object.keys(mid)).toEqual(['type', 'score', 'confidence', 'legend', 'probabilities']);
    expect(mid.legend).toEqual({ 0: 'negative', 1: 'neutral', 2: 'positive' });
    expect(mid.score).toBeCloseTo(mid.probabilities['1'] + 2 * mid.probabilities['2'], 12);
    expect(Math.abs(sum(mid.probabilities) - 1)).toBeLessThan(1e-6);
    const { pack } = await packOf(IAB);
    const count = (t: string) => pack.backbone.countTokens(t);
    const expected =
      count(STATE) +
      count('Is the reviewer happy with the car?') +
      count('Which powertrain?\nelectric: battery powered\npetrol\ndiesel') +
      count('How positive is it?\nnegative\nneutral\npositive');
    expect(res.body.usage).toEqual({ input_tokens: expected, output_tokens: 0, total_tokens: expected });
  });

  it('keeps request order for names that look like numbers (a parsed object would list them first, numerically)', async () => {
    const rawBody =
      `{"model":"${IAB}","state":"${STATE}","questions":{` +
      '"10":{"type":"noul","instructions":"Is it about cars?"},' +
      '"later":{"type":"noul","instructions":"Is it long?"},' +
      '"2":{"type":"choice","criteria":{"yes":null,"20":null,"3":null}},' +
      '"0":{"type":"noul"}}}';
    const response = await fetch(`${server.baseUrl}/v1/systemone`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: rawBody,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    const at = (name: string) => text.indexOf(`"${name}":{"type"`);
    expect([at('10'), at('later'), at('2'), at('0')].every((i) => i > 0)).toBe(true);
    expect(at('10')).toBeLessThan(at('later'));
    expect(at('later')).toBeLessThan(at('2'));
    expect(at('2')).toBeLessThan(at('0'));
    // The choice's probabilities in its criteria's order too.
    expect(text).toMatch(/"2":\{"type":"choice","choice":"[^"]+","confidence":[^,]+,"probabilities":\{"yes":[^,]+,"20":[^,]+,"3":[^,}]+\}\}/);
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(['model', 'answers', 'usage']);
    expect(body.answers['2'].type).toBe('choice');
    expect(body.answers['0']).toEqual({ type: 'noul', noul: 0.5 });
    expect(response.headers.get('x-typesafe-request-id')).toBe(response.headers.get('x-request-id'));
  });

  it('lists the failures of integer-like question names in request order too', async () => {
    const rawBody = `{"model":"${IAB}","state":"x","questions":{"10":{"type":"choice"},"2":{"type":"score"}}}`;
    const res = await call(server.baseUrl, 'POST', '/v1/systemone', { headers: { 'x-api-key': key, 'content-type': 'application/json' }, rawBody });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'questions', '10', 'criteria'],
      ['body', 'questions', '2', 'criteria'],
    ]);
  });

  it('zero-shot (rule 5): choice and score probabilities are softmax(cos/T) of the state against the criteria texts', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: {
        c: { type: 'choice', criteria: { electric: 'battery powered', petrol: null } },
        s: { type: 'score', criteria: ['bad', { level: 'good' }] },
      },
    });
    expect(res.status).toBe(200);
    const [pe, pp] = await zeroShot(IAB, STATE, ['electric: battery powered', 'petrol']);
    expect(res.body.answers.c.probabilities.electric).toBeCloseTo(pe!, 5);
    expect(res.body.answers.c.probabilities.petrol).toBeCloseTo(pp!, 5);
    const [, pGood] = await zeroShot(IAB, STATE, ['bad', '{"level":"good"}']);
    expect(res.body.answers.s.probabilities['1']).toBeCloseTo(pGood!, 5);
    expect(res.body.answers.s.legend).toEqual({ 0: 'bad', 1: '{"level":"good"}' });
  });

  it('embeds question texts once: a repeated request runs the backbone on the state alone', async () => {
    const body = { model: IAB, state: 'A cached-criteria probe.', questions: { q: { type: 'choice', criteria: { north: null, south: null, east: null } } } };
    expect((await decide(body)).status).toBe(200);
    const { backend } = await packOf(IAB);
    const before = backend.batchStats('all-minilm-l6-v2')!.items;
    const again = await decide({ ...body, state: 'Another state, same criteria.' });
    expect(again.status).toBe(200);
    expect(backend.batchStats('all-minilm-l6-v2')!.items - before).toBe(1);
  });

  it('an object state is read as its JSON', async () => {
    const questions = { q: { type: 'choice', criteria: { red: null, blue: null } } };
    const asObject = await decide({ model: IAB, state: { colour: 'blue sky' }, questions });
    const asString = await decide({ model: IAB, state: '{"colour":"blue sky"}', questions });
    expect(asObject.body.answers).toEqual(asString.body.answers);
    expect(asObject.body.usage).toEqual(asString.body.usage);
  });
});

describe('label-mapped questions (rules 3 and 4)', () => {
  it('a choice naming Content 2.2 labels (name or tier path, any case) reads the pack’s rolled-up scores', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: { topic: { type: 'choice', criteria: { automotive: null, 'Sports > Soccer': null, 'FOOD & DRINK': 'recipes' } } },
    });
    expect(res.status).toBe(200);
    const scores = await contentScores(IAB, STATE);
    const set = scores.sets.get('iab_content_2_2')!;
    const raw = ['Automotive', 'Sports > Soccer', 'Food & Drink'].map((n) => set.probs[findLabel(set.set, n)]!);
    const total = raw.reduce((a, b) => a + b, 0);
    const p = res.body.answers.topic.probabilities;
    expect(p.automotive).toBeCloseTo(raw[0]! / total, 6);
    expect(p['Sports > Soccer']).toBeCloseTo(raw[1]! / total, 6);
    expect(p['FOOD & DRINK']).toBeCloseTo(raw[2]! / total, 6);
    // a parent covers its branch: Automotive's score is at least its best child's
    const auto = findLabel(set.set, 'Automotive');
    set.set.labels.forEach((l, i) => {
      if (l.parent === auto) expect(set.probs[auto]!).toBeGreaterThanOrEqual(set.probs[i]!);
    });
  });

  it('a noul whose instructions name a label ("Is this about Automotive?") reads that label’s score', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: { a: { type: 'noul', instructions: 'Is this about Automotive?' }, b: { type: 'noul', instructions: 'automotive > auto type' } },
    });
    const set = (await contentScores(IAB, STATE)).sets.get('iab_content_2_2')!;
    expect(res.body.answers.a.noul).toBeCloseTo(set.probs[findLabel(set.set, 'Automotive')]!, 6);
    expect(res.body.answers.b.noul).toBeCloseTo(set.probs[findLabel(set.set, 'Automotive > Auto Type')]!, 6);
  });

  it('commercial intent reads the Purchase Intent audiences; brand safety the Sensitive Topics branch', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: {
        buy: { type: 'noul', instructions: 'Is the reader likely to buy a car soon?' },
        safe: { type: 'noul', instructions: 'Is this page brand safe?' },
        unsafe: { type: 'noul', instructions: 'Is this unsafe for brands, i.e. not brand safe?' },
      },
    });
    expect(res.status).toBe(200);
    const scores = await contentScores(IAB, STATE);
    const audience = scores.sets.get('iab_audience_1_1')!;
    expect(res.body.answers.buy.noul).toBeCloseTo(audience.probs[findLabel(audience.set, 'Purchase Intent*')]!, 6);
    expect(res.body.answers.safe.noul + res.body.answers.unsafe.noul).toBeCloseTo(1, 12);
    // The pack's own Sensitive Topics label (Content 2.2, alphanumeric id), rolled up over its 11 topics.
    const content = scores.sets.get('iab_content_2_2')!;
    const root = findLabel(content.set, 'Sensitive Topics');
    expect(content.set.labels[root]).toMatchObject({ key: 'v9i3On', parent: -1 });
    const topics = content.set.labels.flatMap((l, i) => (l.parent === root ? [i] : []));
    expect(topics.map((i) => content.set.labels[i]!.name)).toContain('Arms & Ammunition');
    expect(topics).toHaveLength(11);
    expect(content.probs[root]).toBeGreaterThanOrEqual(Math.max(...topics.map((i) => content.probs[i]!)));
    expect(res.body.answers.unsafe.noul).toBeCloseTo(content.probs[root]!, 6);
    expect(res.body.answers.safe.noul).toBeCloseTo(1 - content.probs[root]!, 6);
  });

  it('moderation model: a noul naming a category reads its score; a choice of categories too', async () => {
    const text = 'I will hurt you.';
    const res = await decide({
      model: 'zlm-v1-moderation-edge',
      state: text,
      questions: { v: { type: 'noul', instructions: 'violence' }, which: { type: 'choice', criteria: { hate: null, Violence: null } } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { model, backend } = await packOf('zlm-v1-moderation-edge');
    const scores = await backend.scorePack(model, text);
    const mod = scores.sets.get('moderation')!;
    const pv = mod.probs[findLabel(mod.set, 'violence')]!;
    const ph = mod.probs[findLabel(mod.set, 'hate')]!;
    expect(res.body.answers.v.noul).toBeCloseTo(pv, 6);
    expect(res.body.answers.which.probabilities.Violence).toBeCloseTo(pv / (pv + ph), 6);
  });

  it('a fitted calibrator in the model directory applies to every answer of its type', async () => {
    const body = { model: IAB, state: STATE, questions: { a: { type: 'noul', instructions: 'Is this about Automotive?' } } };
    const before = (await decide(body)).body.answers.a.noul as number;
    const file = path.join(modelsDir, IAB, 'decision-calibration.json');
    writeFileSync(file, JSON.stringify({ noul: { temperature: 2, bias: 0.5 } }));
    try {
      const after = (await decide(body)).body.answers.a.noul as number;
      const logit = Math.log(before / (1 - before));
      expect(after).toBeCloseTo(1 / (1 + Math.exp(-(logit / 2 + 0.5))), 9);
    } finally {
      rmSync(file);
    }
  });
});

describe('models and aliases', () => {
  it('jev-latest and versioned jev ids answer with the configured default, which the answer names', async () => {
    for (const alias of ['jev-latest', 'jev-1.13.0']) {
      const res = await decide({ model: alias, state: 'x', questions: { q: { type: 'noul' } } });
      expect(res.status).toBe(200);
      expect(res.body.model).toBe(IAB);
      expect(res.body.answers.q).toEqual({ type: 'noul', noul: 0.5 });
    }
  });

  it('400 model_not_supported for a known model that does not decide; 404 model_not_found for an unknown one', async () => {
    const notDecision = await decide({ model: 'zlm-v1-multi-iab-classify', state: 'x', questions: { q: { type: 'noul' } } });
    expect(notDecision.status).toBe(400);
    expect(notDecision.body).toEqual({
      error: {
        message:
          'Model zlm-v1-multi-iab-classify does not answer decisions; use one of zlm-v1-moderation-edge, zlm-v1-iab-classify-edge, zlm-v1-iab-domain-classifier, zlm-v2-iab-classify-edge-enriched',
        type: 'invalid_request_error',
        code: 'model_not_supported',
        param: 'model',
      },
    });
    const unknown = await decide({ model: 'no-such-model', state: 'x', questions: { q: { type: 'noul' } } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { message: 'The model `no-such-model` does not exist', type: 'invalid_request_error', code: 'model_not_found', param: 'model' } });
  });

  it('the domain classifier wants a URL or domain as state (422 value_error)', async () => {
    const ok = await decide({ model: 'zlm-v1-iab-domain-classifier', state: 'https://www.cars.example.com/reviews', questions: { q: { type: 'noul', instructions: 'Is this about Automotive?' } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const bad = await decide({ model: 'zlm-v1-iab-domain-classifier', state: 'just some words', questions: { q: { type: 'noul' } } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'state'],
          msg: 'Value error, state must be a URL or a domain for zlm-v1-iab-domain-classifier',
          input: 'just some words',
          ctx: { error: 'state must be a URL or a domain for zlm-v1-iab-domain-classifier' },
        },
      ],
    });
  });

  it('GET /v1/models carries System One’s models list beside OpenAI’s data', async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/models', { key });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.models).toHaveLength(res.body.data.length);
    const entry = res.body.models.find((m: { name: string }) => m.name === IAB);
    expect(entry).toEqual({
      name: IAB,
      description: 'classification model, served on /v1/chat/completions, /v1/responses, /v1/systemone',
      release_date: '2026-01-01',
    });
  });
});

describe('refusals', () => {
  it('401 for a missing key and for an invalid one (this route’s own rule), with x-typesafe-request-id', async () => {
    const missing = await call(server.baseUrl, 'POST', '/v1/systemone', { body: { model: IAB, state: 'x', questions: { q: { type: 'noul' } } } });
    expect(missing.status).toBe(401);
    expect(missing.body.error.type).toBe('authentication_error');
    expect(missing.headers.get('x-typesafe-request-id')).toBe(missing.headers.get('x-request-id'));
    const invalid = await decide({ model: IAB, state: 'x', questions: { q: { type: 'noul' } } }, 'sk-not-a-real-key');
    expect(invalid.status).toBe(401);
    expect(invalid.body.error.type).toBe('authentication_error');
    // the general /v1 rule is unchanged elsewhere
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key: 'sk-not-a-real-key' })).status).toBe(403);
  });

  it('402 insufficient_quota when the project has no credit', async () => {
    const broke = await server.newTenant({ balanceUsd: 0 });
    const res = await decide({ model: IAB, state: 'x', questions: { q: { type: 'noul' } } }, broke.key);
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
  });

  it('422 for malformed JSON, an empty body and an invalid body (every failure listed)', async () => {
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const malformed = await call(server.baseUrl, 'POST', '/v1/systemone', { headers, rawBody: '{"a" 1}' });
    expect(malformed.status).toBe(422);
    expect(malformed.body).toEqual({
      detail: [{ type: 'json_invalid', loc: ['body', 5], msg: 'JSON decode error', input: {}, ctx: { error: "line 1, column 6: Expected ':' after the property name, found '1'" } }],
    });
    expect(malformed.headers.get('x-typesafe-request-id')).toBe(malformed.headers.get('x-request-id'));
    const empty = await call(server.baseUrl, 'POST', '/v1/systemone', { headers, rawBody: '' });
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });
    const deep = await call(server.baseUrl, 'POST', '/v1/systemone', { headers, rawBody: `{"model":"${IAB}","state":${'['.repeat(65)}${']'.repeat(65)}}` });
    expect(deep.status).toBe(422);
    expect(deep.body).toEqual({
      detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: 'JSON nests deeper than 64 levels, the limit for request bodies' } }],
    });
    const invalid = await decide({ model: IAB, state: null, questions: { q: { type: 'choice' } } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'state', 'str'],
      ['body', 'state', 'dict[str,any]'],
      ['body', 'state', 'list[any]'],
      ['body', 'questions', 'q', 'criteria'],
    ]);
  });
});

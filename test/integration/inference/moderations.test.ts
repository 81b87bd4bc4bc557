/** POST /v1/moderations (digest §3.1), with the moderation model bound to the fake upstream. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { json, MODERATION_CATEGORIES } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const moderate = (key: string, body: unknown) => call(env.server.baseUrl, 'POST', '/v1/moderations', { key, body });

const OPENAI_ORDER = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

/** The wire result the fake's scores must produce: violence 0.9 for "kill", else 0.01 everywhere. */
function expectedResult(violent: boolean) {
  const entries = (f: (c: string) => unknown) => Object.fromEntries(OPENAI_ORDER.map((c) => [c, f(c)]));
  return {
    flagged: violent,
    categories: entries((c) => violent && c === 'violence'),
    category_scores: entries((c) => (violent && c === 'violence' ? 0.9 : 0.01)),
    category_applied_input_types: entries(() => ['text']),
  };
}

describe('happy path', () => {
  it('defaults the model, answers all 13 categories in OpenAI order, and meters the input', async () => {
    expect([...MODERATION_CATEGORIES]).toEqual(OPENAI_ORDER);
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await moderate(tenant.key, { input: 'I will kill the process' });
    expect(res.status).toBe(200);
    expect(res.body.id).toMatch(/^modr-[0-9a-f]{33}$/);
    expect(res.body).toEqual({ id: res.body.id, model: 'zlm-v1-moderation-edge', results: [expectedResult(true)] });
    for (const key of ['categories', 'category_scores', 'category_applied_input_types']) {
      expect(Object.keys(res.body.results[0][key])).toEqual(OPENAI_ORDER);
    }
    expect(env.upstream.requests[0]!.body).toEqual({ model: 'zlm-v1-moderation-edge', input: ['I will kill the process'] });
    // Upstream moderations report no usage: 23 bytes → ⌈23/4⌉ = 6 tokens (no tokenizer installed) × $0.02/M → 1 µ$.
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ model: 'zlm-v1-moderation-edge', route: '/v1/moderations', inputTokens: 6, outputTokens: 0, costMicros: 1, status: 200 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 1);
  });

  it('gives one result per string of an array, in order', async () => {
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, { model: 'zlm-v1-moderation-edge', input: ['hello there', 'kill it'] });
    expect(res.body.results).toEqual([expectedResult(false), expectedResult(true)]);
  });

  it('treats text parts as one input', async () => {
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, { input: [{ type: 'text', text: 'first part' }, { type: 'text', text: 'kill' }] });
    expect(res.body.results).toEqual([expectedResult(true)]);
    expect(env.upstream.requests[0]!.body.input).toEqual(['first part\nkill']);
  });

  it.each(['omni-moderation-latest', 'text-moderation-stable'])('maps %s to zlm-v1-moderation-edge', async (model) => {
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, { model, input: 'hi' });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('zlm-v1-moderation-edge');
    expect(env.upstream.requests[0]!.body.model).toBe('zlm-v1-moderation-edge');
  });

  it('fills categories the backend did not score with 0 and false', async () => {
    env.upstream.enqueue('/moderations', json({ results: [{ flagged: true, categories: { hate: true }, category_scores: { hate: 0.7 } }] }));
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, { input: 'x' });
    const [result] = res.body.results;
    expect(result.flagged).toBe(true);
    expect(Object.keys(result.category_scores)).toEqual(OPENAI_ORDER);
    expect(result.category_scores.hate).toBe(0.7);
    expect(result.categories.hate).toBe(true);
    expect(result.category_scores.violence).toBe(0);
    expect(result.categories.violence).toBe(false);
  });
});

describe('validation and routing', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['missing input', {}, 'input is required', 'input'],
    ['an empty string', { input: '' }, 'input must be a non-empty string, an array of non-empty strings, or an array of text parts', 'input'],
    ['an empty array', { input: [] }, 'input must be a non-empty string, an array of non-empty strings, or an array of text parts', 'input'],
    ['a mixed array', { input: ['a', 3] }, 'input[1] must be a non-empty string', 'input[1]'],
    ['an image part', { input: [{ type: 'image_url', image_url: { url: 'x' } }] }, 'input[0].type must be "text"; only text is supported', 'input[0].type'],
    ['a part without text', { input: [{ type: 'text' }] }, 'input[0].text must be a non-empty string', 'input[0].text'],
    ['a non-string model', { model: 5, input: 'x' }, 'model must be a string, got a number', 'model'],
  ];
  it.each(cases)('rejects %s', async (_name, body, message, param) => {
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    expect(env.upstream.count()).toBe(0);
  });

  it('refuses models that do not moderate', async () => {
    const tenant = await env.server.newTenant();
    const res = await moderate(tenant.key, { model: 'gpt-oss-120b', input: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'Model gpt-oss-120b is not supported on /v1/moderations; it is served on /v1/chat/completions and /v1/responses',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
  });
});

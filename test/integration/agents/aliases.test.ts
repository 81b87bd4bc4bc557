/**
 * Model aliases on every wire: `models.<id>.aliases` (exact names) and the top-level
 * `aliases:` map (exact names and globs, first match in file order, ids and exact names
 * first). The answer names the model asked for; `x-sluice-model` and the usage record
 * name the model that served. Clients are the official `openai` SDK and plain HTTP, in
 * front of a fake engine on loopback that records what it received.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let client: OpenAI;
let key: string;
let projectId: string;

const ALIASES = `aliases:
  claude-*haiku*: qwen3-30b-a3b-fp8
  claude-*: gpt-oss-120b
  my-embedder: all-minilm-l6-v2
`;

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: { 'gpt-oss-120b': { upstream_model: 'openai/gpt-oss-120b', aliases: ['big-coder', 'claude-sonnet-4-6'] } },
    yamlTail: ALIASES,
  });
  const tenant = await env.server.newTenant();
  key = tenant.key;
  projectId = tenant.projectId;
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const chat = (model: string, stream = false) =>
  call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model, stream, messages: [{ role: 'user', content: 'Hello' }] } });

describe('aliases on chat completions', () => {
  it('an exact alias (models.<id>.aliases): the answer names it, x-sluice-model and the engine get the model', async () => {
    const res = await chat('big-coder');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('big-coder');
    expect(res.headers.get('x-sluice-model')).toBe('gpt-oss-120b');
    expect(env.upstream.requests[0]!.body.model).toBe('openai/gpt-oss-120b');
  });

  it('a glob alias: the first that matches, in file order (haiku before the catch-all)', async () => {
    const haiku = await chat('claude-haiku-4-5');
    expect(haiku.status).toBe(200);
    expect(haiku.body.model).toBe('claude-haiku-4-5');
    expect(haiku.headers.get('x-sluice-model')).toBe('qwen3-30b-a3b-fp8');
    const opus = await chat('claude-opus-4-7');
    expect(opus.body.model).toBe('claude-opus-4-7');
    expect(opus.headers.get('x-sluice-model')).toBe('gpt-oss-120b');
    expect(env.upstream.requests.map((r) => r.body.model)).toEqual(['qwen3-30b-a3b-fp8', 'openai/gpt-oss-120b']);
  });

  it('an exact alias comes before a glob that also matches it', async () => {
    const res = await chat('claude-sonnet-4-6');
    expect(res.body.model).toBe('claude-sonnet-4-6');
    expect(res.headers.get('x-sluice-model')).toBe('gpt-oss-120b');
  });

  it('names are matched case-insensitively; the answer keeps the spelling asked', async () => {
    const res = await chat('Claude-Haiku-4-5');
    expect(res.body.model).toBe('Claude-Haiku-4-5');
    expect(res.headers.get('x-sluice-model')).toBe('qwen3-30b-a3b-fp8');
  });

  it('a model id is answered as before, with x-sluice-model naming it too', async () => {
    const res = await chat('gpt-oss-120b');
    expect(res.body.model).toBe('gpt-oss-120b');
    expect(res.headers.get('x-sluice-model')).toBe('gpt-oss-120b');
  });

  it('streamed: every chunk names the alias; the header names the model', async () => {
    const res = await fetch(`${env.server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.headers.get('x-sluice-model')).toBe('qwen3-30b-a3b-fp8');
    const chunks = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as { model: string });
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['claude-haiku-4-5']));
  });

  it('an unknown name that no glob matches is refused as before', async () => {
    const res = await chat('gpt-7');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });
});

describe('aliases on the other wires', () => {
  it('responses (openai SDK): the response names the alias', async () => {
    const response = await client.responses.create({ model: 'claude-opus-4-7', input: 'Hello' });
    expect(response.model).toBe('claude-opus-4-7');
    expect(response.output_text).toBe('Hello from the fake upstream.');
    expect(env.upstream.requests[0]!.body.model).toBe('openai/gpt-oss-120b');
  });

  it('legacy completions by a glob alias', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/completions', { key, body: { model: 'claude-opus-4-7', prompt: 'Hello' } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('claude-opus-4-7');
    expect(res.headers.get('x-sluice-model')).toBe('gpt-oss-120b');
    expect(env.upstream.requests[0]!.body.model).toBe('openai/gpt-oss-120b');
  });

  it('embeddings by an exact top-level alias', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: 'my-embedder', input: 'hello' } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('my-embedder');
    expect(res.headers.get('x-sluice-model')).toBe('all-minilm-l6-v2');
  });

  it('OpenAI retrieve by alias answers under the name asked', async () => {
    expect(await client.models.retrieve('big-coder')).toMatchObject({ id: 'big-coder', object: 'model', owned_by: 'sluice' });
  });

  it('usage records name the model that served, never the alias', async () => {
    const records = await usageOf(env.server, projectId);
    expect(records.length).toBeGreaterThan(0);
    const models = new Set(records.map((r) => r.model));
    expect(models).toEqual(new Set(['gpt-oss-120b', 'qwen3-30b-a3b-fp8', 'all-minilm-l6-v2']));
  });
});

/** POST /v1/embeddings, with the embedding models bound to the fake upstream (as to TEI). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { fakeEmbedding, handler, json } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const embed = (key: string, body: unknown) => call(env.server.baseUrl, 'POST', '/v1/embeddings', { key, body });

describe('happy path', () => {
  it('embeds one string, naming the model as upstream does, with prompt-only usage', async () => {
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, { model: 'all-minilm-l6-v2', input: 'hello world' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: fakeEmbedding('hello world', 4) }],
      model: 'all-MiniLM-L6-v2',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    expect(env.upstream.requests[0]!.body).toEqual({ model: 'sentence-transformers/all-MiniLM-L6-v2', input: ['hello world'], encoding_format: 'float' });
  });

  it('returns one vector per input in input order, even when the upstream answers out of order', async () => {
    env.upstream.enqueue(
      '/embeddings',
      handler((req, res) => {
        const data = (req.body.input as string[]).map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, 3) })).reverse();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'x', usage: { prompt_tokens: 5, total_tokens: 5 } }));
      }),
    );
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, { model: 'bge-small-en-v1.5', input: ['one two three', 'four five'] });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('bge-small-en-v1.5');
    expect(res.body.data).toEqual([
      { object: 'embedding', index: 0, embedding: fakeEmbedding('one two three', 3) },
      { object: 'embedding', index: 1, embedding: fakeEmbedding('four five', 3) },
    ]);
  });

  it('encodes base64 as little-endian float32, like OpenAI', async () => {
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, { model: 'all-minilm-l6-v2', input: 'hello world', encoding_format: 'base64' });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(res.body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(16);
    const decoded = [0, 1, 2, 3].map((i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(fakeEmbedding('hello world', 4).map(Math.fround));
  });

  it('accepts dimensions equal to the native size and refuses any other', async () => {
    env.upstream.embeddingDimensions(384);
    const tenant = await env.server.newTenant();
    const native = await embed(tenant.key, { model: 'all-minilm-l6-v2', input: 'x', dimensions: 384 });
    expect(native.status).toBe(200);
    expect(native.body.data[0].embedding).toHaveLength(384);
    const shorter = await embed(tenant.key, { model: 'all-minilm-l6-v2', input: 'x', dimensions: 256 });
    expect(shorter.status).toBe(400);
    expect(shorter.body.error).toEqual({
      message: 'dimensions must be 384 for model all-minilm-l6-v2; it cannot shorten its vectors',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: 'dimensions',
    });
    expect(env.upstream.count('/embeddings')).toBe(1);
  });

  it('bills input tokens only, on /v1/embeddings', async () => {
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    await embed(tenant.key, { model: 'all-minilm-l6-v2', input: ['one two three', 'four five'] });
    // 5 tokens × $0.50/M = 2.5 µ$ → 3
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ model: 'all-minilm-l6-v2', route: '/v1/embeddings', inputTokens: 5, outputTokens: 0, costMicros: 3, status: 200 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 3);
  });

  it('answers 502 when the upstream returns the wrong number of vectors', async () => {
    env.upstream.enqueue('/embeddings', json({ object: 'list', data: [], usage: { prompt_tokens: 1, total_tokens: 1 } }));
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, { model: 'all-minilm-l6-v2', input: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('Upstream for model all-minilm-l6-v2 answered unexpectedly: expected 1 embeddings');
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });
});

describe('validation and routing', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['missing input', { model: 'all-minilm-l6-v2' }, 'input is required', 'input'],
    ['an empty string', { model: 'all-minilm-l6-v2', input: '' }, 'input must be a non-empty string or an array of non-empty strings', 'input'],
    ['an empty array', { model: 'all-minilm-l6-v2', input: [] }, 'input must be a non-empty string or an array of non-empty strings', 'input'],
    ['an empty element', { model: 'all-minilm-l6-v2', input: ['a', ''] }, 'input[1] must be a non-empty string', 'input[1]'],
    ['token arrays', { model: 'all-minilm-l6-v2', input: [1, 2, 3] }, 'input[0] must be a non-empty string', 'input[0]'],
    ['a bad encoding_format', { model: 'all-minilm-l6-v2', input: 'a', encoding_format: 'int8' }, 'encoding_format must be "float" or "base64"', 'encoding_format'],
    ['missing model', { input: 'a' }, 'model is required', 'model'],
  ];
  it.each(cases)('rejects %s', async (_name, body, message, param) => {
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    expect(env.upstream.count()).toBe(0);
  });

  it('refuses chat models', async () => {
    const tenant = await env.server.newTenant();
    const res = await embed(tenant.key, { model: 'gpt-oss-120b', input: 'a' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'Model gpt-oss-120b is not supported on /v1/embeddings; it is served on /v1/chat/completions and /v1/responses',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
  });
});

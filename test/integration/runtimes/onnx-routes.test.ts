/**
 * The in-process ONNX models through the HTTP routes, on generated random-weight
 * models: /v1/embeddings (shapes, batching across concurrent requests, billing) and
 * zero-shot classification on /v1/chat/completions and /v1/responses.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import type { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';

let server: TestServer;
let modelsDir: string;
let key: string;

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2', 'bge-small-en-v1.5', 'deberta-v3-small', 't5-small']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

describe('POST /v1/embeddings (onnx)', () => {
  it('answers the OpenAI list shape with normalised vectors and usage', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/embeddings', {
      key,
      body: { model: 'all-minilm-l6-v2', input: ['hello world', 'good news'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', model: 'all-MiniLM-L6-v2' });
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[1]).toMatchObject({ object: 'embedding', index: 1 });
    const v: number[] = res.body.data[0].embedding;
    expect(v).toHaveLength(32);
    expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    expect(res.body.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
  });

  it('writes float vectors in their shortest exact float32 form, the same values as base64', async () => {
    const body = { model: 'all-minilm-l6-v2', input: 'the same sentence twice' };
    const asFloat = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body });
    const asBase64 = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: { ...body, encoding_format: 'base64' } });
    expect([asFloat.status, asBase64.status]).toEqual([200, 200]);
    const bytes = Buffer.from(asBase64.body.data[0].embedding as string, 'base64');
    const exact = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    const numbers: number[] = asFloat.body.data[0].embedding;
    expect(numbers.map((x) => Math.fround(x))).toEqual(exact);
    // No float32 needs more than 9 significant digits.
    const digits = (x: number) => x.toExponential().split('e')[0]!.replace(/[-.]/g, '').length;
    expect(Math.max(...numbers.map(digits))).toBeLessThanOrEqual(9);
  });

  it('coalesces concurrent HTTP requests into fewer runtime calls and bills each', async () => {
    const backend = (await server.core.registry.backendFor(server.core.registry.find('bge-small-en-v1.5')!, 'embed')) as OnnxBackend;
    const before = { ...(backend.batchStats('bge-small-en-v1.5') ?? { batches: 0, items: 0, largestBatch: 0 }) };
    const n = 24;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: 'bge-small-en-v1.5', input: `request ${i} about travel` } }),
      ),
    );
    expect(responses.every((r) => r.status === 200 && r.body.data[0].embedding.length === 32)).toBe(true);
    const after = backend.batchStats('bge-small-en-v1.5')!;
    expect(after.items - before.items).toBe(n);
    expect(after.batches - before.batches).toBeLessThan(n);
    const usage = await call(server.baseUrl, 'GET', '/metrics');
    expect(String(usage.body)).toMatch(/sluice_usage_tokens_total\{model="bge-small-en-v1.5",direction="input"\}/);
    // The batcher's counters as Prometheus metrics: _count batches, _sum inputs.
    const metric = (name: string) => Number(new RegExp(`${name}\\{model="bge-small-en-v1.5"\\} (\\d+)`).exec(String(usage.body))?.[1]);
    expect(metric('sluice_embedding_batch_size_count')).toBe(after.batches);
    expect(metric('sluice_embedding_batch_size_sum')).toBe(after.items);
  });

  it('refuses an embedding model on chat completions', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'all-minilm-l6-v2', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('model_not_found');
  });
});

describe('embeddings on low credit (onnx: an exact tokenizer)', () => {
  // At 1,000 USD per million input tokens: the byte bound of "hello world" and "good news"
  // is 11 + 9 bytes + 8 framing each = 36 tokens (36,000 µ$); the call uses 8 tokens.
  let priced: TestServer;
  beforeAll(async () => {
    const yaml = 'models:\n  all-minilm-l6-v2: { price: { input_per_million_usd: 1000, output_per_million_usd: 1000 } }\n';
    priced = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
  });
  afterAll(async () => priced?.close());
  const balanceOf = async (projectId: string) => (await priced.core.projects.getProject(projectId)).balanceMicros;
  const embed = (key: string) =>
    call(priced.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: 'all-minilm-l6-v2', input: ['hello world', 'good news'] } });

  it('serves an input whose byte bound the credit does not cover, holding its counted tokens instead', async () => {
    const tenant = await priced.newTenant({ balanceUsd: 0.025 });
    const res = await embed(tenant.key);
    expect(res.status).toBe(200);
    expect(res.body.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(await balanceOf(tenant.projectId)).toBe(25_000 - 8_000);
  });

  it('still refuses when the counted tokens do not fit either', async () => {
    const tenant = await priced.newTenant({ balanceUsd: 0.008 });
    const res = await embed(tenant.key);
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(res.body.error.message).toMatch(/^Insufficient credit: this request may cost up to 0\.0\d{5} USD/);
    expect(await balanceOf(tenant.projectId)).toBe(8_000);
  });
});

describe('zero-shot classification (deberta-v3-small)', () => {
  it('returns the label → probability JSON on chat completions, labels from the system message', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'deberta-v3-small',
        messages: [
          { role: 'system', content: '[Sports,Politics,Technology]' },
          { role: 'user', content: 'The new phone has a faster chip.' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const result = JSON.parse(res.body.choices[0].message.content);
    expect(Object.keys(result).sort()).toEqual(['politics', 'sports', 'technology']);
    expect(Object.values(result as Record<string, number>).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('takes labels from instructions on responses', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', {
      key,
      body: { model: 'deberta-v3-small', input: 'Stocks fell sharply today.', instructions: '[sports, finance, politics]' },
    });
    expect(res.status).toBe(200);
    const result = JSON.parse(res.body.output[0].content[0].text);
    expect(Object.keys(result)).toHaveLength(3);
  });
});

describe('summarization (t5-small)', () => {
  it('answers the summary as plain text on chat completions and responses', async () => {
    const chat = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 't5-small', messages: [{ role: 'user', content: 'the meeting in paris was moved to tomorrow because of the weather' }] },
    });
    expect(chat.status).toBe(200);
    expect(typeof chat.body.choices[0].message.content).toBe('string');
    expect(chat.body.usage.completion_tokens).toBeGreaterThan(0);
    const responses = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 't5-small', input: 'news '.repeat(900) } });
    expect(responses.status).toBe(200);
    expect(responses.body.usage.input_tokens).toBe(512);
  });
});

/**
 * Batches on every endpoint `batches.endpoints` allows, driven by the official `openai`
 * SDK against models bound to the fake upstream: each line runs through its route's own
 * validator and service, its result line has OpenAI's shape, and the batch carries
 * `model` and `usage` summed over its lines. `output_expires_after` sets the files'
 * `expires_at`, and the janitor removes them once it passes.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { inferenceYaml } from '../inference/setup.js';
import { createBatch, jsonl, uploadOk } from './support/batch-helpers.js';
import { janitorOf, TestClock } from './support/test-clock.js';

const ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/moderations', '/v1/completions'];
const BATCHES_YAML = `batches:\n  retry_base_ms: 20\n  lease_seconds: 2\n  endpoints: [${ENDPOINTS.join(', ')}]\n`;

const clock = new TestClock();
let upstream: FakeUpstream;
let server: TestServer;
let client: OpenAI;
let key: string;
let projectId: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl) + BATCHES_YAML, overrides: { clock }, startWorkers: true });
  ({ key, projectId } = await server.newTenant({ balanceUsd: 5 }));
  client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];

/** files.create → batches.create → retrieve until terminal, as a client of the SDK does. */
async function runBatch(name: string, url: string, bodies: Record<string, unknown>[], extra: Partial<OpenAI.BatchCreateParams> = {}) {
  const lines = bodies.map((body, i) => ({ custom_id: `${name}-${i + 1}`, method: 'POST', url, body }));
  const input = path.join(server.dataDir, `${name}.jsonl`);
  writeFileSync(input, jsonl(lines));
  const file = await client.files.create({ file: createReadStream(input), purpose: 'batch' });
  const endpoint = url as OpenAI.BatchCreateParams['endpoint'];
  let batch = await client.batches.create({ input_file_id: file.id, endpoint, completion_window: '24h', ...extra });
  const deadline = Date.now() + 60_000;
  while (!TERMINAL.includes(batch.status) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    batch = await client.batches.retrieve(batch.id);
  }
  return batch;
}

async function contentOf(fileId: string | null | undefined): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const usageOf = (input: number, output: number, reasoning = 0, cached = 0) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
});

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('a batch on /v1/embeddings through the openai SDK', () => {
  it('embeds every line with the route’s answer, and the batch’s usage is the sum of the lines’', async () => {
    const inputs = ['one two three', ['alpha beta', 'gamma'], 'a b c d e f'];
    const batch = await runBatch('emb', '/v1/embeddings', inputs.map((input) => ({ model: 'all-minilm-l6-v2', input })));
    expect(batch).toMatchObject({ status: 'completed', endpoint: '/v1/embeddings', model: 'all-minilm-l6-v2', request_counts: { total: 3, completed: 3, failed: 0 } });
    expect(batch.error_file_id).toBeNull();

    const lines = await contentOf(batch.output_file_id);
    expect(lines.map((l) => l.custom_id)).toEqual(['emb-1', 'emb-2', 'emb-3']);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(['id', 'custom_id', 'response', 'error']);
      expect(line.id).toMatch(/^batch_req_[0-9a-f]{32}$/);
      expect(line.error).toBeNull();
      expect(line.response).toMatchObject({ status_code: 200, request_id: expect.stringMatching(/^req_/) });
      expect(line.response.body).toMatchObject({ object: 'list', model: 'all-MiniLM-L6-v2' });
    }
    expect(lines[1].response.body.data.map((d: any) => d.index)).toEqual([0, 1]);
    const promptTokens = lines.map((l) => l.response.body.usage.prompt_tokens as number);
    expect(promptTokens).toEqual([3, 3, 6]);
    expect(batch.usage).toEqual(usageOf(sum(promptTokens), 0));
    // Each line reached the engine once, as the synchronous route sends it.
    const sent = upstream.requests.filter((r) => r.path === '/embeddings').map((r) => r.body.input);
    expect(sent.sort()).toEqual([['a b c d e f'], ['alpha beta', 'gamma'], ['one two three']]);
    // The usage is the batch's from now on: the same on retrieve and list.
    const listed = (await client.batches.list()).data.find((b) => b.id === batch.id);
    expect(listed?.usage).toEqual(batch.usage);
  });

  it('a line its route refuses is an error line worded as the route answers it', async () => {
    const bad = { model: 'all-minilm-l6-v2', input: [] };
    const direct = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: bad });
    expect(direct.status).toBe(400);
    const batch = await runBatch('emb-bad', '/v1/embeddings', [{ model: 'all-minilm-l6-v2', input: 'fine' }, bad]);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    const [error] = await contentOf(batch.error_file_id);
    expect(error).toEqual({
      id: expect.stringMatching(/^batch_req_/),
      custom_id: 'emb-bad-2',
      response: null,
      error: { code: 'invalid_request_error', message: `[legacy:http_400] ${direct.body.error.message}`, param: direct.body.error.param },
    });
    // Only the line that ran counts.
    expect(batch.usage).toEqual(usageOf(1, 0));
  });
});

describe('the other endpoints', () => {
  it('/v1/completions: text completions, usage summed from prompt and completion tokens', async () => {
    const batch = await runBatch('cmpl', '/v1/completions', [
      { model: 'gpt-oss-120b', prompt: 'Once upon a time', max_tokens: 16 },
      { model: 'gpt-oss-120b', prompt: ['first', 'second'], max_tokens: 16 },
    ]);
    expect(batch).toMatchObject({ status: 'completed', model: 'gpt-oss-120b', request_counts: { total: 2, completed: 2, failed: 0 } });
    const lines = await contentOf(batch.output_file_id);
    expect(lines.map((l) => l.response.body.object)).toEqual(['text_completion', 'text_completion']);
    const usage = lines.map((l) => l.response.body.usage);
    expect(batch.usage).toEqual(usageOf(sum(usage.map((u) => u.prompt_tokens)), sum(usage.map((u) => u.completion_tokens))));
    expect(batch.usage!.total_tokens).toBeGreaterThan(0);
    const prompts = upstream.requests.filter((r) => r.path === '/completions').map((r) => JSON.stringify(r.body.prompt));
    expect(prompts.sort()).toEqual(['"Once upon a time"', '["first","second"]']);
  });

  it('/v1/responses: response objects, usage summed in the Responses shape, reasoning tokens included', async () => {
    upstream.chat({ content: 'Four.', usage: { prompt_tokens: 9, completion_tokens: 5, reasoning_tokens: 2 } });
    const batch = await runBatch('resp', '/v1/responses', [
      { model: 'gpt-oss-120b', input: 'What is 2+2?' },
      { model: 'gpt-oss-120b', input: 'And 3+3?', instructions: 'Be brief.' },
    ]);
    expect(batch).toMatchObject({ status: 'completed', model: 'gpt-oss-120b', request_counts: { total: 2, completed: 2, failed: 0 } });
    const lines = await contentOf(batch.output_file_id);
    for (const line of lines) {
      expect(line.response.body).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-oss-120b' });
      expect(line.response.body.usage).toEqual(usageOf(9, 5, 2));
    }
    expect(batch.usage).toEqual(usageOf(18, 10, 4));
  });

  it('/v1/chat/completions: reasoning tokens of the lines are summed into output_tokens_details', async () => {
    upstream.chat({ content: 'ok', usage: { prompt_tokens: 4, completion_tokens: 6, reasoning_tokens: 3 } });
    const batch = await runBatch('chat', '/v1/chat/completions', [1, 2, 3].map((n) => ({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: `line ${n}` }] })));
    expect(batch).toMatchObject({ status: 'completed', model: 'gpt-oss-120b', usage: usageOf(12, 18, 9) });
  });

  it('/v1/moderations: results per line; usage is what the lines were metered for', async () => {
    const before = await server.core.repositories.usage.listByProject(projectId, 1000);
    const batch = await runBatch('mod', '/v1/moderations', [{ input: 'hello there' }, { input: ['a b', 'c'], model: 'zlm-v1-moderation-edge' }]);
    expect(batch).toMatchObject({ status: 'completed', model: null, request_counts: { total: 2, completed: 2, failed: 0 } });
    const lines = await contentOf(batch.output_file_id);
    expect(lines.map((l) => l.response.body.results.length)).toEqual([1, 2]);
    const seen = new Set(before.items.map((r) => r.id));
    const records = (await server.core.repositories.usage.listByProject(projectId, 1000)).items.filter((r) => !seen.has(r.id));
    expect(records.map((r) => r.route)).toEqual(['batch', 'batch']);
    expect(batch.usage).toEqual(usageOf(sum(records.map((r) => r.inputTokens)), 0));
    expect(batch.usage!.input_tokens).toBeGreaterThan(0);
  });
});

describe('output_expires_after', () => {
  it('sets expires_at on the output and error files; the janitor removes them once it passes', async () => {
    const batch = await runBatch(
      'exp',
      '/v1/embeddings',
      [{ model: 'all-minilm-l6-v2', input: 'kept an hour' }, { model: 'nope', input: 'x' }],
      { output_expires_after: { anchor: 'created_at', seconds: 3600 } },
    );
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    const ids = [batch.output_file_id!, batch.error_file_id!];
    for (const id of ids) {
      const file = await client.files.retrieve(id);
      expect(file.expires_at).toBe(file.created_at + 3600);
    }
    clock.advance(3_601_000);
    for (const id of ids) await expect(client.files.retrieve(id)).rejects.toBeInstanceOf(NotFoundError);
    const blobs = [`batches/${batch.id}/output.jsonl`, `batches/${batch.id}/error.jsonl`];
    for (const blob of blobs) expect(await server.core.blobs.stat(blob)).not.toBeNull();
    await janitorOf(server.assembly).runOnce();
    for (const blob of blobs) expect(await server.core.blobs.stat(blob)).toBeNull();
  });

  it('without it, the files keep the 30-day retention', async () => {
    const batch = await runBatch('exp-default', '/v1/embeddings', [{ model: 'all-minilm-l6-v2', input: 'thirty days' }]);
    const file = await client.files.retrieve(batch.output_file_id!);
    expect(file.expires_at).toBe(file.created_at + 30 * 24 * 3600);
  });

  it.each([
    [{ anchor: 'created_at', seconds: 60 }, "Invalid 'output_expires_after.seconds': integer below minimum value. Expected a value >= 3600, but got 60 instead.", 'output_expires_after.seconds', 'integer_below_min_value'],
    [{ anchor: 'created_at', seconds: 2_592_001 }, "Invalid 'output_expires_after.seconds': integer above maximum value. Expected a value <= 2592000, but got 2592001 instead.", 'output_expires_after.seconds', 'integer_above_max_value'],
    [{ anchor: 'created_at', seconds: '3600' }, "Invalid type for 'output_expires_after.seconds': expected an integer, but got a string instead.", 'output_expires_after.seconds', 'invalid_type'],
    [{ anchor: 'created_at' }, "Missing required parameter: 'output_expires_after.seconds'.", 'output_expires_after.seconds', 'missing_required_parameter'],
    [{ anchor: 'last_active_at', seconds: 3600 }, "Invalid value: 'last_active_at'. Supported values are: 'created_at'.", 'output_expires_after.anchor', 'invalid_value'],
    [{ seconds: 3600 }, "Missing required parameter: 'output_expires_after.anchor'.", 'output_expires_after.anchor', 'missing_required_parameter'],
    [{ anchor: 'created_at', seconds: 3600, days: 1 }, "Unknown parameter: 'output_expires_after.days'.", 'output_expires_after.days', 'unknown_parameter'],
    ['1h', "Invalid type for 'output_expires_after': expected an object, but got a string instead.", 'output_expires_after', 'invalid_type'],
  ])('refuses %j in OpenAI’s words, and records the failed batch', async (expiry, message, param, code) => {
    const fileId = await uploadOk(server.baseUrl, key, jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'all-minilm-l6-v2', input: 'x' } }]));
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/embeddings', output_expires_after: expiry });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ message, type: 'invalid_request_error', param, code });
    const failed = (await client.batches.list({ limit: 100 })).data.find((b) => b.errors?.data?.[0]?.message === message);
    expect(failed).toMatchObject({ status: 'failed', errors: { data: [{ message, param, code, line: null }] } });
  });

  it('the SDK raises the refusal as a BadRequestError', async () => {
    const fileId = await uploadOk(server.baseUrl, key, jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'all-minilm-l6-v2', input: 'x' } }]));
    const attempt = client.batches.create({ input_file_id: fileId, endpoint: '/v1/embeddings', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 10 } });
    await expect(attempt).rejects.toBeInstanceOf(BadRequestError);
  });
});

describe('which endpoints a batch may use', () => {
  let plain: TestServer;
  let plainKey: string;

  beforeAll(async () => {
    // The default config: chat completions only; and an endpoint listed that no model serves.
    plain = await startTestServer({ yaml: 'batches:\n  endpoints: [/v1/chat/completions, /v1/completions]\n' });
    ({ key: plainKey } = await plain.newTenant());
  });
  afterAll(async () => plain.close());

  it('refuses an endpoint batches.endpoints does not list with the spec’s message', async () => {
    const fileId = await uploadOk(server.baseUrl, key, jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/audio/speech', body: { model: 'x', input: 'y' } }]));
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/audio/speech' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ message: 'Line 1 url "/v1/audio/speech" is not an allowed batch endpoint', type: 'invalid_request_error', param: null, code: 'invalid_request_error', line: 1 });
  });

  it('refuses an endpoint listed but served by no model here, before reading the input', async () => {
    const fileId = await uploadOk(plain.baseUrl, plainKey, jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/completions', body: { model: 'gpt-oss-120b', prompt: 'x' } }]));
    const res = await createBatch(plain.baseUrl, plainKey, { input_file_id: fileId, endpoint: '/v1/completions' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'endpoint "/v1/completions" is not served by any model on this server',
      type: 'invalid_request_error',
      param: 'endpoint',
      code: 'endpoint_not_served',
    });
  });
});

describe('the default config', () => {
  let plain: TestServer;
  let plainKey: string;

  beforeAll(async () => {
    plain = await startTestServer();
    ({ key: plainKey } = await plain.newTenant());
  });
  afterAll(async () => plain.close());

  it.each(['/v1/embeddings', '/v1/responses', '/v1/completions', '/v1/moderations', '/v1/systemone'])(
    'refuses a batch on %s with the spec’s message, verbatim',
    async (url) => {
      const fileId = await uploadOk(plain.baseUrl, plainKey, jsonl([{ custom_id: 'a', method: 'POST', url, body: { model: 'all-minilm-l6-v2', input: 'x' } }]));
      const res = await createBatch(plain.baseUrl, plainKey, { input_file_id: fileId, endpoint: url });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ message: `Line 1 url "${url}" is not an allowed batch endpoint`, type: 'invalid_request_error', param: null, code: 'invalid_request_error', line: 1 });
    },
  );
});

describe('the OpenAPI document', () => {
  it('describes output_expires_after and every batchable endpoint on create, and model and usage on the batch', async () => {
    const { paths, components } = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body;
    const resolved = (schema: any) => (schema.$ref ? components.schemas[schema.$ref.split('/').pop()] : schema);
    const create = paths['/v1/batches'].post;
    const body = resolved(create.requestBody.content['application/json'].schema);
    expect(body.properties.output_expires_after.properties).toEqual({
      anchor: expect.objectContaining({ enum: ['created_at'] }),
      seconds: expect.objectContaining({ type: 'integer', minimum: 3600, maximum: 2592000 }),
    });
    expect(JSON.stringify(body.properties.endpoint)).toContain('/v1/systemone');
    const batch = resolved(create.responses['200'].content['application/json'].schema);
    expect(Object.keys(batch.properties.usage.properties)).toEqual(['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens']);
    expect(batch.properties).toHaveProperty('model');
  });
});

/**
 * A batch on /v1/systemone (enabled by `batches.endpoints`), over the random-weight
 * MiniLM-shaped packs: each line is decided by the decision service as the route decides
 * it, with the same answers; a body the route refuses (FastAPI's 422) is the line's
 * error; the batch's usage sums the lines' input tokens.
 */
import { rmSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { fileLines, isTerminal, jsonl, uploadOk, waitForBatch } from './support/batch-helpers.js';

const IAB = 'zlm-v1-iab-classify-edge';
const STATE = 'The new electric sedan has a longer range and a faster charger.';

let server: TestServer;
let modelsDir: string;
let key: string;

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  server = await startTestServer({
    env: { MODELS_DIR: modelsDir, DECISION_DEFAULT_MODEL: IAB },
    yaml: 'batches:\n  retry_base_ms: 20\n  lease_seconds: 2\n  endpoints: [/v1/chat/completions, /v1/systemone]\n',
    startWorkers: true,
  });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const questions = (topic: string) => ({
  happy: { type: 'noul', instructions: `Is the reviewer happy with the ${topic}?` },
  power: { type: 'choice', instructions: 'Which powertrain?', criteria: { electric: 'battery powered', petrol: null } },
});

describe('a batch on /v1/systemone', () => {
  it('decides every line as the route does; a refused body is its line’s error; usage sums the lines’', async () => {
    const bodies = [
      { model: IAB, state: STATE, questions: questions('car') },
      { model: IAB, state: 'A quiet kettle that boils fast.', questions: questions('kettle') },
      { model: IAB, state: STATE },
    ];
    const lines = bodies.map((body, i) => ({ custom_id: `d-${i + 1}`, method: 'POST', url: '/v1/systemone', body }));
    const fileId = await uploadOk(server.baseUrl, key, jsonl(lines));
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
    const created = await client.batches.create({ input_file_id: fileId, endpoint: '/v1/systemone' as OpenAI.BatchCreateParams['endpoint'], completion_window: '24h' });
    expect(created).toMatchObject({ status: 'validating', endpoint: '/v1/systemone', model: IAB });
    const batch = await waitForBatch(server.baseUrl, key, created.id, isTerminal, 120_000);
    expect(batch).toMatchObject({ status: 'completed', model: IAB, request_counts: { total: 3, completed: 2, failed: 1 } });

    const output = await fileLines(server.baseUrl, key, batch.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(['d-1', 'd-2']);
    for (const [i, line] of output.entries()) {
      expect(line.response.status_code).toBe(200);
      const direct = await call(server.baseUrl, 'POST', '/v1/systemone', { key, body: bodies[i] });
      expect(direct.status).toBe(200);
      // The same service, the same scores: the line's answer is the route's.
      expect(line.response.body).toEqual(direct.body);
      expect(Object.keys(line.response.body.answers)).toEqual(['happy', 'power']);
    }
    const [error] = await fileLines(server.baseUrl, key, batch.error_file_id);
    expect(error).toMatchObject({ custom_id: 'd-3', response: null, error: { code: 'invalid_request_error' } });
    expect(error.error.message).toMatch(/^\[legacy:http_422\] /);

    const input = output.reduce((n, l) => n + (l.response.body.usage.input_tokens as number), 0);
    expect(input).toBeGreaterThan(0);
    expect(batch.usage).toEqual({
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input,
    });
  }, 180_000);
});

describe('integer-like question names in a /v1/systemone batch', () => {
  it('keeps their request order in the output line, byte for byte as the route writes it', async () => {
    const body =
      `{"model":"${IAB}","state":"${STATE}","questions":{` +
      '"10":{"type":"noul","instructions":"Is it about cars?"},' +
      '"later":{"type":"noul","instructions":"Is it long?"},' +
      '"2":{"type":"choice","criteria":{"yes":null,"20":null,"3":null}},' +
      '"0":{"type":"noul"}}}';
    const line = `{"custom_id":"ordered","method":"POST","url":"/v1/systemone","body":${body}}`;
    const fileId = await uploadOk(server.baseUrl, key, `${line}\n`);
    const created = await call(server.baseUrl, 'POST', '/v1/batches', { key, body: { input_file_id: fileId, endpoint: '/v1/systemone' } });
    expect(created.status).toBe(200);
    const batch = await waitForBatch(server.baseUrl, key, created.body.id, isTerminal, 120_000);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 } });

    const direct = await fetch(`${server.baseUrl}/v1/systemone`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
    const directText = await direct.text();
    const text = await (await fetch(`${server.baseUrl}/v1/files/${batch.output_file_id}/content`, { headers: { 'x-api-key': key } })).text();
    expect(text).toContain(`"response":{"status_code":200,"request_id":"req_`);
    expect(text).toContain(`"body":${directText}},"error":null}`);
    const at = (name: string) => text.indexOf(`"${name}":{"type"`);
    expect([at('10'), at('later'), at('2'), at('0')].every((i) => i > 0)).toBe(true);
    expect(at('10')).toBeLessThan(at('later'));
    expect(at('later')).toBeLessThan(at('2'));
    expect(at('2')).toBeLessThan(at('0'));
    expect(JSON.parse(text).custom_id).toBe('ordered');
  }, 180_000);
});

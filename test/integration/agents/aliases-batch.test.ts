/**
 * Aliases in batches: a line naming an alias runs on the model it resolves to, its result
 * names the alias as the synchronous route does, and its usage record the model that
 * served. Driven by the official `openai` SDK against a fake engine on loopback.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { inferenceYaml, usageOf } from '../inference/setup.js';
import { jsonl } from '../batches/support/batch-helpers.js';

let upstream: FakeUpstream;
let server: TestServer;
let client: OpenAI;
let projectId: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = `${inferenceYaml(upstream.baseUrl)}aliases:\n  claude-*: gpt-oss-120b\nbatches:\n  retry_base_ms: 20\n  lease_seconds: 2\n`;
  server = await startTestServer({ yaml, startWorkers: true });
  const tenant = await server.newTenant({ balanceUsd: 5 });
  projectId = tenant.projectId;
  client = new OpenAI({ apiKey: tenant.key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('a chat batch naming a glob alias', () => {
  it('runs each line on the model the alias resolves to; results name the alias, usage records the model', async () => {
    const lines = [1, 2].map((i) => ({
      custom_id: `line-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: `Hello ${i}` }] },
    }));
    const input = path.join(server.dataDir, 'aliases.jsonl');
    writeFileSync(input, jsonl(lines));
    const file = await client.files.create({ file: createReadStream(input), purpose: 'batch' });
    let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const deadline = Date.now() + 60_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      batch = await client.batches.retrieve(batch.id);
    }
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const text = await (await client.files.content(batch.output_file_id!)).text();
    const results = text.trim().split('\n').map((l) => JSON.parse(l) as { response: { status_code: number; body: { model: string } } });
    expect(results.map((r) => [r.response.status_code, r.response.body.model])).toEqual([
      [200, 'claude-haiku-4-5'],
      [200, 'claude-haiku-4-5'],
    ]);
    expect(upstream.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body.model)).toEqual(['openai/gpt-oss-120b', 'openai/gpt-oss-120b']);
    const records = await usageOf(server, projectId);
    expect(records.filter((r) => r.route === 'batch').map((r) => r.model)).toEqual(['gpt-oss-120b', 'gpt-oss-120b']);
  });
});

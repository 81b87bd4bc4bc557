/** The official `openai` SDK, unchanged, against Sluice: upload → create → poll → download, list, cancel. */
import { writeFileSync, createReadStream } from 'node:fs';
import path from 'node:path';
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { requestLines, upstreamYaml } from './support/batch-helpers.js';

let upstream: FakeUpstream;
let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl), startWorkers: true });
  const { key } = await server.newTenant();
  client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('openai SDK', () => {
  it('files.create → batches.create → retrieve until done → files.content', async () => {
    const input = path.join(server.dataDir, 'sdk-input.jsonl');
    writeFileSync(input, requestLines(4, 'sdk'));
    const file = await client.files.create({ file: createReadStream(input), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'sdk-input.jsonl' });

    let batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'sdk' },
    });
    expect(batch.request_counts?.total).toBe(4);
    const deadline = Date.now() + 60_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      batch = await client.batches.retrieve(batch.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.metadata).toEqual({ job: 'sdk' });

    const content = await client.files.content(batch.output_file_id!);
    const lines = (await content.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['sdk-1', 'sdk-2', 'sdk-3', 'sdk-4']);
    expect(lines[0].response.body.object).toBe('chat.completion');

    const retrieved = await client.files.retrieve(batch.output_file_id!);
    expect(retrieved.purpose).toBe('batch_output');
  });

  it('lists with auto-pagination, cancels, deletes, and raises NotFoundError', async () => {
    const ids: string[] = [];
    for await (const b of client.batches.list({ limit: 1 })) ids.push(b.id);
    expect(ids.length).toBeGreaterThanOrEqual(1);
    const files: string[] = [];
    for await (const f of client.files.list({ limit: 2 })) files.push(f.id);
    expect(files.length).toBeGreaterThanOrEqual(2);

    const input = path.join(server.dataDir, 'sdk-cancel.jsonl');
    writeFileSync(input, requestLines(2, 'cancel'));
    const file = await client.files.create({ file: createReadStream(input), purpose: 'batch' });
    upstream.setDefault('/chat/completions', { type: 'stall' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const cancelled = await client.batches.cancel(batch.id);
    expect(['cancelling', 'cancelled']).toContain(cancelled.status);

    const deleted = await client.files.delete(file.id);
    expect(deleted).toMatchObject({ id: file.id, deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.batches.retrieve('batch_missing')).rejects.toBeInstanceOf(NotFoundError);
  });
});

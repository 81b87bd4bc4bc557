/** A batch's lines are in the request log: one entry per line, naming its batch, with the line's request id, usage and cost. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { isTerminal, jsonl, MODEL, requestLine, startBatch, upstreamYaml, waitForBatch } from '../batches/support/batch-helpers.js';
import { FAST_FLUSH_YAML, flushLog } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: `${upstreamYaml(upstream.baseUrl, { max_attempts: 1 })}${FAST_FLUSH_YAML}`, startWorkers: true });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('batch lines', () => {
  it('logs one entry per line with batch_id set, scope batch, and the usage record figures', async () => {
    const { key } = await server.newTenant({ balanceUsd: 5 });
    const lines = [requestLine('one', 'hello'), requestLine('two', 'world'), { ...requestLine('bad', 'x'), body: { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] } }];
    const { batch } = await startBatch(server.baseUrl, key, jsonl(lines));
    await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    let entries: any[] = [];
    await vi.waitFor(async () => {
      await flushLog(server);
      entries = (await call(server.baseUrl, 'GET', '/v1/requests?limit=100', { key })).body.data.filter((r: any) => r.batch_id === batch.id);
      expect(entries).toHaveLength(3);
    });
    const usage = await server.core.database.db.selectFrom('usage_records').selectAll().where('request_id', 'in', entries.map((e) => e.id)).execute();
    expect(usage).toHaveLength(2);
    for (const entry of entries) {
      expect(entry).toMatchObject({ scope: 'batch', route: '/v1/chat/completions', wire: 'chat-completions', stream: false });
      const record = usage.find((u) => u.request_id === entry.id);
      if (record) {
        expect(entry).toMatchObject({ status: 200, model_requested: MODEL, error_code: null, usage: { input_tokens: Number(record.input_tokens), output_tokens: Number(record.output_tokens) } });
        expect(entry.cost_usd).toBe(Number(record.cost_micros) / 1e6);
      } else {
        expect(entry).toMatchObject({ status: 400, model_requested: 'no-such-model', error_code: 'model_not_found' });
      }
    }
  });
});

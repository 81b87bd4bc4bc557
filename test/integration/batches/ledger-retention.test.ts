/**
 * Line-result retention: the per-line ledger (results and shards) of a batch is dropped
 * in the transaction that ends it, while its output and error files, its final counts
 * and its files' own 30-day retention are untouched. Time is an injected clock, moved
 * only once every batch has ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { download, isTerminal, jsonl, requestLine, requestLines, resultsOf, startBatch, upstreamYaml, waitForBatch } from './support/batch-helpers.js';
import { Gate, scriptUpstream } from './support/scripted-upstream.js';
import { DAY_MS, janitorOf, TestClock } from './support/test-clock.js';

const clock = new TestClock();
let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({
    yaml: upstreamYaml(upstream.baseUrl, { shard_lines: 2, per_batch_concurrency: 2 }),
    overrides: { clock },
    startWorkers: true,
  });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

async function ledgerOf(batchId: string) {
  const db = server.core.database.db;
  const results = await db.selectFrom('batch_line_results').select('line_no').where('batch_id', '=', batchId).execute();
  const shards = await db.selectFrom('batch_shards').select('id').where('batch_id', '=', batchId).execute();
  return { results: results.length, shards: shards.length };
}

describe('the line-result ledger', () => {
  let key: string;
  let done: any;

  it('is gone once the batch completed; the output and error files hold every line', async () => {
    scriptUpstream(upstream, (content) => (content === 'bad' ? { status: 400, message: 'no' } : 'ok'));
    ({ key } = await server.newTenant({ balanceUsd: 1 }));
    const lines = [requestLine('a'), requestLine('b', 'bad'), requestLine('c'), requestLine('d'), requestLine('e', 'bad')];
    const { batch } = await startBatch(server.baseUrl, key, jsonl(lines));
    done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 3, failed: 2 } });

    expect(await ledgerOf(batch.id)).toEqual({ results: 0, shards: 0 });
    const { output, errors, seen } = await resultsOf(server.baseUrl, key, done);
    expect(output.map((l) => l.custom_id)).toEqual(['a', 'c', 'd']);
    expect(errors.map((l) => l.custom_id)).toEqual(['b', 'e']);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Final counts come from the batch row now, on retrieve and list alike.
    expect((await call(server.baseUrl, 'GET', `/v1/batches/${batch.id}`, { key })).body.request_counts).toEqual({ total: 5, completed: 3, failed: 2 });
    const listed = (await call(server.baseUrl, 'GET', '/v1/batches', { key })).body.data.find((b: any) => b.id === batch.id);
    expect(listed.request_counts).toEqual({ total: 5, completed: 3, failed: 2 });
  });

  it('is gone once a batch is cancelled', async () => {
    upstream.reset(); // waitForRequests below counts this batch's calls only
    const gate = new Gate();
    scriptUpstream(upstream, () => 'ok', gate);
    const { key: other } = await server.newTenant({ balanceUsd: 1 });
    const { batch } = await startBatch(server.baseUrl, other, requestLines(6));
    await upstream.waitForRequests(2, '/chat/completions', 20_000);
    expect((await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key: other })).body.status).toBe('cancelling');
    gate.open();
    const cancelled = await waitForBatch(server.baseUrl, other, batch.id, isTerminal);
    expect(cancelled).toMatchObject({ status: 'cancelled', request_counts: { total: 6, completed: 2, failed: 4 } });
    expect(await ledgerOf(batch.id)).toEqual({ results: 0, shards: 0 });
    expect((await resultsOf(server.baseUrl, other, cancelled)).seen.size).toBe(6);
  });

  it('output and error files then follow the 30-day retention of every file', async () => {
    const ids = [done.output_file_id, done.error_file_id];
    clock.advance(30 * DAY_MS - 60_000);
    for (const id of ids) expect((await download(server.baseUrl, key, id)).status).toBe(200);
    clock.advance(120_000);
    for (const id of ids) {
      expect((await call(server.baseUrl, 'GET', `/v1/files/${id}`, { key })).status).toBe(404);
      expect((await download(server.baseUrl, key, id)).status).toBe(404);
    }
    const blobs = [`batches/${done.id}/output.jsonl`, `batches/${done.id}/error.jsonl`];
    for (const blob of blobs) expect(await server.core.blobs.stat(blob)).not.toBeNull();
    await janitorOf(server.assembly).runOnce();
    for (const blob of blobs) expect(await server.core.blobs.stat(blob)).toBeNull();
    // The batch itself is still there, naming the files it wrote.
    expect((await call(server.baseUrl, 'GET', `/v1/batches/${done.id}`, { key })).body).toMatchObject({ status: 'completed', output_file_id: ids[0] });
  });
});

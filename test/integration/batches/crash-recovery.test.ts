/**
 * Durability: a worker process killed with SIGKILL mid-batch loses nothing. After a new
 * worker takes over, every input line is in exactly one of the output and error files,
 * once, each successful line is billed once, and the batch's usage counts each line
 * once. SIGTERM drains and hands shards back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { handler, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { isTerminal, requestLines, resultsOf, startBatch, upstreamYaml, waitForBatch } from './support/batch-helpers.js';
import { chatCompletion } from './support/scripted-upstream.js';
import { spawnWorker, type WorkerProcess } from './support/worker-process.js';

const LINES = 200;
let upstream: FakeUpstream;
let server: TestServer;
const workers: WorkerProcess[] = [];

function startWorker(): WorkerProcess {
  const worker = spawnWorker({ ...server.dataEnv, SLUICE_CONFIG: path.join(server.dataDir, 'sluice.yaml') });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // Every answer takes 40 ms, so a batch is still running when the worker is killed.
  upstream.setDefault(
    '/chat/completions',
    handler(async (req, res) => {
      await new Promise((r) => setTimeout(r, 40));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(chatCompletion(String(req.body?.model), 'ok')));
    }),
  );
  // The server itself runs no workers: only the spawned processes do.
  server = await startTestServer({
    yaml: upstreamYaml(upstream.baseUrl, { shard_lines: 20, per_batch_concurrency: 4, lease_seconds: 2 }),
  });
});
afterEach(async () => {
  for (const w of workers.splice(0)) {
    w.kill('SIGKILL');
    await w.exited;
  }
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

async function expectExactlyOnce(key: string, projectId: string, done: any, balanceBefore: number) {
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
  const { output, errors, seen } = await resultsOf(server.baseUrl, key, done);
  expect(errors).toEqual([]);
  expect(output).toHaveLength(LINES);
  expect(seen.size).toBe(LINES);
  expect([...seen.values()].every((n) => n === 1)).toBe(true);
  const usage = await server.core.projects.listUsage(projectId, 1000);
  expect(usage.items).toHaveLength(LINES);
  expect(new Set(usage.items.map((u) => u.requestId)).size).toBe(LINES);
  const spent = usage.items.reduce((sum, u) => sum + u.costMicros, 0);
  expect((await server.core.projects.getProject(projectId)).balanceMicros).toBe(balanceBefore - spent);
  // The batch's usage: each recorded line once, though lines in flight at the crash ran twice.
  const input = output.reduce((sum, l) => sum + l.response.body.usage.prompt_tokens, 0);
  const outputTokens = output.reduce((sum, l) => sum + l.response.body.usage.completion_tokens, 0);
  expect(input).toBe(usage.items.reduce((sum, u) => sum + u.inputTokens, 0));
  expect(outputTokens).toBe(usage.items.reduce((sum, u) => sum + u.outputTokens, 0));
  expect(done.usage).toMatchObject({ input_tokens: input, output_tokens: outputTokens, total_tokens: input + outputTokens });
  expect(input).toBeGreaterThan(0);
}

describe('a worker process killed mid-batch', () => {
  it('SIGKILL: a restarted worker finishes the batch; each line once, billed once', async () => {
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    const balanceBefore = (await server.core.projects.getProject(projectId)).balanceMicros;
    const { batch } = await startBatch(server.baseUrl, key, requestLines(LINES));

    const first = startWorker();
    const midway = await waitForBatch(server.baseUrl, key, batch.id, (b) => b.request_counts.completed >= 40 || isTerminal(b), 90_000);
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(midway.status).toBe('in_progress');
    const atKill = (await call(server.baseUrl, 'GET', `/v1/batches/${batch.id}`, { key })).body;
    expect(atKill.request_counts.completed).toBeLessThan(LINES);
    // Live usage: the lines recorded so far.
    expect(atKill.usage.input_tokens).toBeGreaterThan(0);

    startWorker();
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal, 120_000);
    await expectExactlyOnce(key, projectId, done, balanceBefore);
    // Lines in flight at the kill reached the upstream twice, yet were billed once (checked above).
    expect(upstream.count('/chat/completions')).toBeGreaterThanOrEqual(LINES);
  }, 240_000);

  it('SIGTERM: the worker drains, hands its shards back at once, and exits 0', async () => {
    upstream.requests.length = 0;
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    const balanceBefore = (await server.core.projects.getProject(projectId)).balanceMicros;
    const { batch } = await startBatch(server.baseUrl, key, requestLines(LINES));

    const first = startWorker();
    await waitForBatch(server.baseUrl, key, batch.id, (b) => b.request_counts.completed >= 40 || isTerminal(b), 90_000);
    first.kill('SIGTERM');
    expect(await first.exited, first.output()).toBe(0);
    const leased = await server.core.database.db
      .selectFrom('batch_shards')
      .select('id')
      .where('batch_id', '=', batch.id)
      .where('lease_owner', 'is not', null)
      .execute();
    expect(leased).toEqual([]);

    startWorker();
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal, 120_000);
    await expectExactlyOnce(key, projectId, done, balanceBefore);
  }, 240_000);
});

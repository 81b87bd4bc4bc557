/**
 * A background response survives kill -9 of its worker process: a new worker claims it
 * once the lease expires and runs it again (nothing of its answer had been stored), and
 * it is billed once. A response whose worker keeps dying is failed, never left queued.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { stall, startFakeUpstream, stream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { MODEL, upstreamYaml } from '../batches/support/batch-helpers.js';
import { spawnWorker, type WorkerProcess } from '../batches/support/worker-process.js';

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
  // The server runs no workers: only the spawned processes do. Leases last 2 s.
  server = await startTestServer({ yaml: `${upstreamYaml(upstream.baseUrl)}responses:\n  max_attempts: 2\n` });
});
afterEach(async () => {
  for (const w of workers.splice(0)) {
    w.kill('SIGKILL');
    await w.exited;
  }
  upstream.reset();
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(key: string, id: string, done: (body: any) => boolean, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(server.baseUrl, 'GET', `/v1/responses/${id}`, { key });
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`response ${id} is still ${body.status}`);
    await sleep(50);
  }
}

describe('kill -9 of the worker running a background response', () => {
  it('a new worker runs it again once the lease expires: completed, billed once', async () => {
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    const balanceBefore = (await server.core.projects.getProject(projectId)).balanceMicros;
    upstream.enqueue('/chat/completions', stall());
    const created = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hello', background: true } });
    expect(created.body.status).toBe('queued');

    const first = startWorker();
    await upstream.waitForRequests(1, '/chat/completions', 60_000);
    const running = await waitFor(key, created.body.id, (b) => b.status === 'in_progress');
    expect(running.output).toEqual([]);
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    startWorker();
    const done = await waitFor(key, created.body.id, (b) => b.status === 'completed');
    expect(done.output[0].content[0].text).toBe('Hello from the fake upstream.');
    expect(upstream.count('/chat/completions')).toBe(2);
    const usage = (await server.core.projects.listUsage(projectId, 100)).items;
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ route: '/v1/responses', inputTokens: done.usage.input_tokens, outputTokens: done.usage.output_tokens });
    expect((await server.core.projects.getProject(projectId)).balanceMicros).toBe(balanceBefore - usage[0]!.costMicros);
    // Its events: the rerun's, once each, numbered from 0.
    const replay = await fetch(`${server.baseUrl}/v1/responses/${created.body.id}?stream=true`, { headers: { 'x-api-key': key } });
    const text = await replay.text();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1);
    expect(types.at(-1)).toBe('response.completed');
    const seqs = [...text.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(seqs.map((_, i) => i));
  }, 120_000);

  it('a response whose worker dies on every run is failed after max_attempts runs, not billed', async () => {
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    upstream.setDefault('/chat/completions', stall());
    const created = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hello', background: true } });
    for (let run = 1; run <= 2; run++) {
      const worker = startWorker();
      await upstream.waitForRequests(run, '/chat/completions', 60_000);
      worker.kill('SIGKILL');
      await worker.exited;
    }
    startWorker();
    const failed = await waitFor(key, created.body.id, (b) => b.status === 'failed');
    expect(failed.error).toEqual({
      message: 'The background response could not be run: its worker stopped 2 times before it answered; nothing was billed. Create it again.',
      type: 'server_error',
      param: null,
      code: 'server_error',
    });
    expect(upstream.count('/chat/completions')).toBe(2);
    expect((await server.core.projects.listUsage(projectId, 100)).items).toEqual([]);
  }, 120_000);

  it('a response whose answer had begun when its worker died is failed with an error, not billed', async () => {
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    upstream.enqueue('/chat/completions', stream(['one', ' two', ' three', ' four', ' five', ' six'], { delayMs: 1_000 }));
    const created = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Count', background: true } });
    const first = startWorker();
    // Wait until a delta was stored: a client following the stream may have seen part of the answer.
    for (;;) {
      const stored = await server.core.database.db.selectFrom('response_events').select('event').where('response_id', '=', created.body.id).execute();
      if (stored.some((row) => row.event.includes('response.output_text.delta'))) break;
      await sleep(50);
    }
    first.kill('SIGKILL');
    await first.exited;
    startWorker();
    const failed = await waitFor(key, created.body.id, (b) => b.status === 'failed');
    expect(failed.error).toEqual({
      message: 'The background response was interrupted after it began to answer (its worker stopped) and cannot be resumed; nothing was billed. Create it again.',
      type: 'server_error',
      param: null,
      code: 'server_error',
    });
    expect(upstream.count('/chat/completions')).toBe(1);
    expect((await server.core.projects.listUsage(projectId, 100)).items).toEqual([]);
    // A client following its events sees them end with response.failed.
    const replay = await fetch(`${server.baseUrl}/v1/responses/${created.body.id}?stream=true`, { headers: { 'x-api-key': key } });
    const types = [...(await replay.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.failed');
  }, 120_000);
});

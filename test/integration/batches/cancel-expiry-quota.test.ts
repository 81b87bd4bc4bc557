/**
 * Batches that do not simply run to the end: cancelled, expired, out of credit, or whose
 * key is revoked mid-batch. The upstream is held behind a gate so that "dispatched"
 * and "not yet dispatched" lines are known exactly (2 lines in flight per batch).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { isTerminal, jsonl, requestLine, requestLines, resultsOf, startBatch, upstreamYaml, waitForBatch } from './support/batch-helpers.js';
import { Gate, scriptUpstream } from './support/scripted-upstream.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl, { per_batch_concurrency: 2, shard_lines: 3 }), startWorkers: true });
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('cancel', () => {
  it('cancelling → cancelled: dispatched lines finish, the rest are batch_cancelled', async () => {
    const gate = new Gate();
    scriptUpstream(upstream, () => 'ok', gate);
    const { key } = await server.newTenant();
    const { batch } = await startBatch(server.baseUrl, key, requestLines(10));
    await upstream.waitForRequests(2, '/chat/completions', 20_000);

    const cancel = await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key });
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('cancelling');
    const cancellingAt = cancel.body.cancelling_at;
    expect(cancellingAt).toEqual(expect.any(Number));
    const again = await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key });
    expect(again.body).toMatchObject({ status: 'cancelling', cancelling_at: cancellingAt });
    gate.open();

    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).toBeGreaterThanOrEqual(cancellingAt);
    expect(done.cancelling_at).toBe(cancellingAt);
    expect(done.completed_at).toBeNull();
    expect(done.request_counts).toEqual({ total: 10, completed: 2, failed: 8 });
    const { output, errors, seen } = await resultsOf(server.baseUrl, key, done);
    expect(output).toHaveLength(2);
    expect(errors.every((l) => l.error.code === 'batch_cancelled' && l.response === null)).toBe(true);
    expect(seen.size).toBe(10);
    expect(upstream.count('/chat/completions')).toBe(2);

    const terminal = await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key });
    expect(terminal.status).toBe(409);
    expect(terminal.body.error).toMatchObject({ message: 'Batch already terminal: cancelled', code: 'batch_terminal' });
  });

  it('409 on a completed batch', async () => {
    scriptUpstream(upstream);
    const { key } = await server.newTenant();
    const { batch } = await startBatch(server.baseUrl, key, requestLines(2));
    await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    const res = await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe('Batch already terminal: completed');
  });
});

describe('key revoked mid-batch', () => {
  it('lines dispatched after the revocation fail with authentication_error', async () => {
    const gate = new Gate();
    scriptUpstream(upstream, () => 'ok', gate);
    const tenant = await server.newTenant();
    const poller = await server.core.projects.createKey(tenant.projectId, 'poller');
    const { batch } = await startBatch(server.baseUrl, tenant.key, requestLines(6));
    await upstream.waitForRequests(2, '/chat/completions', 20_000);
    await server.core.projects.revokeKey(tenant.keyId);
    gate.open();
    const done = await waitForBatch(server.baseUrl, poller.key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 6, completed: 2, failed: 4 });
    const { errors } = await resultsOf(server.baseUrl, poller.key, done);
    for (const l of errors) {
      expect(l.error.code).toBe('authentication_error');
      expect(l.error.message).toMatch(/^\[legacy:api_key_unavailable\] /);
    }
  });
});

describe('quota', () => {
  it('lines fail with insufficient_quota once credit runs out, and the batch still completes', async () => {
    scriptUpstream(upstream);
    // Each line is estimated and costs 1 micro-dollar (its input and 5 output tokens at
    // catalog prices, rounded up): exactly 3 fit, however many run at once.
    const tenant = await server.newTenant({ balanceUsd: 0.000003 });
    const lines = Array.from({ length: 9 }, (_, i) => {
      const line = requestLine(`req-${i + 1}`);
      return { ...line, body: { ...(line.body as object), max_tokens: 5 } };
    });
    const { batch } = await startBatch(server.baseUrl, tenant.key, jsonl(lines));
    const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    const { output, errors, seen } = await resultsOf(server.baseUrl, tenant.key, done);
    expect(seen.size).toBe(9);
    expect(output.length).toBe(3);
    expect(errors.length).toBe(6);
    expect((await server.core.projects.getProject(tenant.projectId)).balanceMicros).toBe(0);
    for (const l of errors) {
      expect(l.error.code).toBe('insufficient_quota');
      expect(l.error.message).toMatch(/^\[legacy:http_429\] /);
    }
    const usage = await server.core.projects.listUsage(tenant.projectId, 100);
    expect(usage.items).toHaveLength(output.length);
  });
});

describe('expiry', () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({
      yaml: upstreamYaml(upstream.baseUrl, { per_batch_concurrency: 2, shard_lines: 3 }),
      env: { BATCH_COMPLETION_WINDOW_SECONDS: '5' },
      startWorkers: true,
    });
  });
  afterAll(() => short.close());

  it('undispatched lines get batch_expired after the window; dispatched ones finish; status expired', async () => {
    const gate = new Gate();
    scriptUpstream(upstream, () => 'ok', gate);
    const { key } = await short.newTenant();
    const { batch } = await startBatch(short.baseUrl, key, requestLines(8));
    expect(batch.expires_at - batch.created_at).toBe(5);
    await upstream.waitForRequests(2, '/chat/completions', 20_000);
    // Wait until the window has passed (plus a margin for second rounding), then let the two finish.
    while (Date.now() < (batch.expires_at + 1) * 1000) await new Promise((r) => setTimeout(r, 100));
    gate.open();
    const done = await waitForBatch(short.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('expired');
    expect(done.expired_at).toEqual(expect.any(Number));
    expect(done.request_counts).toEqual({ total: 8, completed: 2, failed: 6 });
    const { output, errors } = await resultsOf(short.baseUrl, key, done);
    expect(output).toHaveLength(2);
    expect(errors.map((l) => l.error.code)).toEqual(Array(6).fill('batch_expired'));
  });
});

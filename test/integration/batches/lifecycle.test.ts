/**
 * The whole batch lifecycle over real sockets, through the real chat-completions path to
 * a fake OpenAI-compatible upstream that fails, flakes and drops connections.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import {
  MODEL,
  download,
  isTerminal,
  jsonl,
  requestLine,
  requestLines,
  resultsOf,
  startBatch,
  upstreamYaml,
  waitForBatch,
} from './support/batch-helpers.js';
import { Gate, scriptUpstream } from './support/scripted-upstream.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({
    yaml: upstreamYaml(upstream.baseUrl, { shard_lines: 4, max_attempts: 3, per_batch_concurrency: 3 }),
    startWorkers: true,
  });
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await server.close();
  await upstream.close();
});

describe('a batch with successes, permanent failures, flakes and dropped connections', () => {
  it('runs every line once, retries what is retryable, and ends completed with both files', async () => {
    const script = scriptUpstream(upstream, (content, attempt) => {
      if (content === 'bad') return { status: 400, message: 'messages[0] is unacceptable' };
      if (content === 'down') return { status: 503 };
      if (content === 'flaky') return attempt <= 2 ? { status: 503 } : 'ok';
      if (content === 'dropped') return attempt === 1 ? 'destroy' : 'ok';
      if (content === 'throttled') return attempt === 1 ? { status: 429 } : 'ok';
      return 'ok';
    });
    const lines = [
      requestLine('ok-1', 'hello'),
      requestLine('bad-1', 'bad'),
      '',
      requestLine('flaky-1', 'flaky'),
      requestLine('down-1', 'down'),
      requestLine('dropped-1', 'dropped'),
      requestLine('throttled-1', 'throttled'),
      { ...requestLine('nomodel-1', 'whatever'), body: { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] } },
      { ...requestLine('invalid-1', 'whatever'), body: { model: MODEL, messages: 'not a list' } },
      requestLine('ok-2', 'world'),
    ];
    const { key, projectId } = await server.newTenant({ balanceUsd: 5 });
    const balanceBefore = (await server.core.projects.getProject(projectId)).balanceMicros;
    const { batch, fileId } = await startBatch(server.baseUrl, key, jsonl(lines), { purpose: 'test' });
    expect(batch.status).toBe('validating');
    expect(batch.request_counts.total).toBe(9);

    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 9, completed: 5, failed: 4 });
    expect(done.in_progress_at).toEqual(expect.any(Number));
    expect(done.in_progress_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.finalizing_at).toBeGreaterThanOrEqual(done.in_progress_at);
    expect(done.completed_at).toBeGreaterThanOrEqual(done.finalizing_at);
    expect(done).toMatchObject({ failed_at: null, expired_at: null, cancelling_at: null, cancelled_at: null, errors: null, metadata: { purpose: 'test' } });
    expect(done.input_file_id).toBe(fileId);

    const { output, errors, seen } = await resultsOf(server.baseUrl, key, done);
    expect([...seen.keys()].sort()).toEqual(['bad-1', 'down-1', 'dropped-1', 'flaky-1', 'invalid-1', 'nomodel-1', 'ok-1', 'ok-2', 'throttled-1']);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Output lines keep input order and the wire shape.
    expect(output.map((l) => l.custom_id)).toEqual(['ok-1', 'flaky-1', 'dropped-1', 'throttled-1', 'ok-2']);
    for (const l of output) {
      expect(l.id).toMatch(/^batch_req_[0-9a-f]{32}$/);
      expect(l.error).toBeNull();
      expect(l.response.status_code).toBe(200);
      expect(l.response.request_id).toMatch(/^req_[0-9a-f]{24}$/);
      expect(l.response.body).toMatchObject({ object: 'chat.completion', model: MODEL });
    }
    expect(new Set([...output, ...errors].map((l) => l.id)).size).toBe(9);
    const byId = Object.fromEntries(errors.map((l) => [l.custom_id, l]));
    expect(byId['bad-1']).toMatchObject({ response: null, error: { code: 'invalid_request_error' } });
    expect(byId['bad-1'].error.message).toBe('[legacy:http_400] messages[0] is unacceptable');
    expect(byId['down-1'].error.code).toBe('internal_error');
    expect(byId['down-1'].error.message).toMatch(/^\[legacy:retries_exhausted\] Line failed after 3 attempts: /);
    expect(byId['nomodel-1'].error).toMatchObject({ code: 'not_found_error', param: 'model' });
    expect(byId['nomodel-1'].error.message).toMatch(/^\[legacy:http_404\] /);
    // The line's body meets the route's own compiled schema, worded as the route words it.
    expect(byId['invalid-1'].error).toEqual({
      code: 'invalid_request_error',
      message: '[legacy:http_400] messages must be a non-empty array',
      param: 'messages',
    });
    for (const l of errors) expect(Object.keys(l).sort()).toEqual(['custom_id', 'error', 'id', 'response']);
    for (const l of errors) expect(Object.keys(l.error).sort()).toEqual(['code', 'message', 'param']);
    // Retries: bounded, and only for retryable failures.
    expect(script.attempts.get('down')).toBe(3);
    expect(script.attempts.get('flaky')).toBe(3);
    expect(script.attempts.get('bad')).toBe(1);

    // Billing: one usage record per successful line, tied to its request id, debited once.
    const usage = await server.core.projects.listUsage(projectId, 100);
    expect(usage.items.map((u) => u.requestId).sort()).toEqual(output.map((l) => l.response.request_id).sort());
    expect(usage.items.every((u) => u.route === 'batch' && u.keyId !== null)).toBe(true);
    const spent = usage.items.reduce((sum, u) => sum + u.costMicros, 0);
    expect((await server.core.projects.getProject(projectId)).balanceMicros).toBe(balanceBefore - spent);
  });

  it('registers the output and error files as batch_output files of the project', async () => {
    scriptUpstream(upstream, (content) => (content === 'bad' ? { status: 400 } : 'ok'));
    const { key } = await server.newTenant();
    const { batch } = await startBatch(server.baseUrl, key, jsonl([requestLine('a'), requestLine('b', 'bad')]));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    const out = await call(server.baseUrl, 'GET', `/v1/files/${done.output_file_id}`, { key });
    const err = await call(server.baseUrl, 'GET', `/v1/files/${done.error_file_id}`, { key });
    expect(out.body).toMatchObject({ purpose: 'batch_output', status: 'processed' });
    expect(out.body).not.toHaveProperty('is_error');
    expect(err.body).toMatchObject({ purpose: 'batch_output', is_error: true });
    const listed = await call(server.baseUrl, 'GET', '/v1/files?purpose=batch_output', { key });
    expect(listed.body.data.map((f: any) => f.id).sort()).toEqual([done.output_file_id, done.error_file_id].sort());
    const content = await download(server.baseUrl, key, done.error_file_id);
    expect(content.text.endsWith('\n')).toBe(true);
    expect(content.text.trim().split('\n')).toHaveLength(1);
  });

  it('an all-success batch has no error file', async () => {
    scriptUpstream(upstream);
    const { key } = await server.newTenant();
    const { batch } = await startBatch(server.baseUrl, key, requestLines(11));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', error_file_id: null, request_counts: { total: 11, completed: 11, failed: 0 } });
    expect((await resultsOf(server.baseUrl, key, done)).output).toHaveLength(11);
  });

  it('request_counts are live while the batch runs', async () => {
    const slow = new Gate();
    scriptUpstream(upstream, () => 'ok', (content) => (content === 'say slow' ? slow : null));
    const { key } = await server.newTenant();
    const { batch } = await startBatch(server.baseUrl, key, requestLines(3, 'live') + jsonl([requestLine('slow', 'say slow')]));
    const midway = await waitForBatch(server.baseUrl, key, batch.id, (b) => b.request_counts.completed >= 3);
    expect(midway.status).toBe('in_progress');
    expect(midway.request_counts).toEqual({ total: 4, completed: 3, failed: 0 });
    const listed = await call(server.baseUrl, 'GET', '/v1/batches', { key });
    expect(listed.body.data[0].request_counts).toEqual({ total: 4, completed: 3, failed: 0 });
    slow.open();
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
  });
});

describe('deleting the input of a running batch', () => {
  it('hides the file at once, lets the batch finish, then removes the blob', async () => {
    const gate = new Gate();
    scriptUpstream(upstream, () => 'ok', gate);
    const { key } = await server.newTenant();
    const { batch, fileId } = await startBatch(server.baseUrl, key, requestLines(5));
    await upstream.waitForRequests(1, '/chat/completions', 20_000);
    const del = await call(server.baseUrl, 'DELETE', `/v1/files/${fileId}`, { key });
    expect(del.body).toEqual({ id: fileId, object: 'file', deleted: true });
    expect((await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key })).status).toBe(404);
    expect((await download(server.baseUrl, key, fileId)).status).toBe(404);
    expect(await server.core.blobs.stat(`files/${fileId}.jsonl`)).not.toBeNull();
    gate.open();
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 5, failed: 0 } });
    // The batch's end collects the blob just after the batch reads as ended: poll.
    await vi.waitFor(async () => expect(await server.core.blobs.stat(`files/${fileId}.jsonl`)).toBeNull());
  });
});

describe('an input whose stored object vanishes before the batch runs', () => {
  it('fails the batch with file_object_missing instead of retrying forever', async () => {
    scriptUpstream(upstream);
    const idle = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl) });
    try {
      const { key } = await idle.newTenant();
      const { batch, fileId } = await startBatch(idle.baseUrl, key, requestLines(3));
      await idle.core.blobs.delete(`files/${fileId}.jsonl`);
      idle.assembly.startWorkers();
      const done = await waitForBatch(idle.baseUrl, key, batch.id, isTerminal);
      expect(done.status).toBe('failed');
      expect(done.errors.data[0]).toMatchObject({ code: 'file_object_missing', message: `Input file object missing: ${fileId}` });
      expect(upstream.count('/chat/completions')).toBe(0);
    } finally {
      await idle.close();
    }
  });
});

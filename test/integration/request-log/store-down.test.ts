/**
 * The log never costs a call: with its store refusing every write (its table gone), calls
 * are answered as before, the entries are dropped and counted in
 * `sluice_request_log_dropped_total`, and /readyz stays ready while its notes show the gap.
 * A full queue drops what does not fit, and counts it, too.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { flushLog } from './setup.js';

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
}, 60_000);
afterAll(async () => {
  await upstream?.close();
});

const yaml = (requestLog: string) => `request_log:
${requestLog}
models:
  llm:
    kind: chat
    base_url: ${upstream.baseUrl}
`;

async function droppedCount(server: TestServer): Promise<number> {
  const text = (await call(server.baseUrl, 'GET', '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith('sluice_request_log_dropped_total'));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

const chat = (server: TestServer, key: string) =>
  call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'llm', messages: [{ role: 'user', content: 'Hi' }] } });

describe('a log store that is down', () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
  });

  it('answers every call, drops and counts the entries, and stays ready with the gap in its notes', async () => {
    server = await startTestServer({ yaml: yaml('  flush_interval_ms: 10') });
    const { key } = await server.newTenant({ balanceUsd: 5 });
    expect(await droppedCount(server)).toBe(0);
    expect((await call(server.baseUrl, 'GET', '/readyz')).body.notes).toBeUndefined();
    await sql`drop table request_log`.execute(server.core.database.db);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => chat(server, key).then((r) => r.status)));
    expect(statuses).toEqual(Array(20).fill(200));
    await vi.waitFor(async () => {
      await flushLog(server);
      expect(await droppedCount(server)).toBe(20);
    });
    const ready = await call(server.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.notes.request_log).toMatch(/^20 entries dropped \(last at .+\); 0 waiting to be written$/);
  });
});

describe('a full queue', () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
  });

  it('keeps what fits, drops and counts the rest, and answers every call', async () => {
    // Written only when the test flushes: a minute between flushes, and batches larger than the queue.
    server = await startTestServer({ yaml: yaml('  flush_interval_ms: 60000\n  batch_size: 100\n  max_queue: 3') });
    const { key } = await server.newTenant({ balanceUsd: 5 });
    for (let i = 0; i < 5; i++) expect((await chat(server, key)).status).toBe(200);
    await vi.waitFor(async () => expect(await droppedCount(server)).toBe(2));
    await flushLog(server);
    const list = await call(server.baseUrl, 'GET', '/v1/requests', { key });
    expect(list.body.data).toHaveLength(3);
  });
});

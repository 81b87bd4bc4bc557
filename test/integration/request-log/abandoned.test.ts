/**
 * A call whose client leaves before its JSON answer is sent gets no response, so Fastify
 * never runs its onResponse: it is logged all the same, as 499, with one entry.
 */
import http from 'node:http';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { FAST_FLUSH_YAML, flushLog } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.chat({ content: 'late answer', delayMs: 400 });
  server = await startTestServer({ yaml: `${FAST_FLUSH_YAML}models:\n  llm:\n    kind: chat\n    base_url: ${upstream.baseUrl}\n` });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

/** Sends a chat call and closes the connection once the upstream has it, before the answer. */
async function leaveEarly(key: string): Promise<void> {
  const body = JSON.stringify({ model: 'llm', messages: [{ role: 'user', content: 'hi' }] });
  const request = http.request(`${server.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  request.on('error', () => {});
  request.end(body);
  await vi.waitFor(() => expect(upstream.count('/chat/completions')).toBe(1));
  request.destroy();
}

it('a client that left before the answer: one entry, status 499', async () => {
  const tenant = await server.newTenant({ balanceUsd: 10 });
  await leaveEarly(tenant.key);
  let entries: any[] = [];
  await vi.waitFor(async () => {
    await flushLog(server);
    const list = await call(server.baseUrl, 'GET', '/v1/requests', { key: tenant.key });
    expect(list.status).toBe(200);
    entries = list.body.data;
    expect(entries).toHaveLength(1);
  });
  expect(entries[0]).toMatchObject({ model_requested: 'llm', status: 499 });
});

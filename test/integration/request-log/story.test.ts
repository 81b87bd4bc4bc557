/**
 * A known story: a call that was retried (two deployments answering 503), then fell back
 * to another model, which streamed. Found by its id, its record shows each attempt, the
 * fallback, the model that served, the cached tokens and the cost, and matches the usage
 * record and the balance exactly.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { fail, startFakeUpstream, stream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { FAST_FLUSH_YAML, flushLog } from './setup.js';

let failing: FakeUpstream;
let healthy: FakeUpstream;
let server: TestServer;
let key: string;
let keyId: string;
let projectId: string;

beforeAll(async () => {
  [failing, healthy] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  failing.setDefault('/chat/completions', fail(503));
  healthy.setDefault('/chat/completions', stream(['Hel', 'lo'], { usage: { prompt_tokens: 40, completion_tokens: 9, cached_tokens: 32 } }));
  server = await startTestServer({
    yaml: `${FAST_FLUSH_YAML}routing:
  retries: 1
models:
  primary:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
    deployments:
      - { id: p-1, base_url: ${failing.baseUrl}, upstream_model: p1 }
      - { id: p-2, base_url: ${failing.baseUrl}, upstream_model: p2 }
    fallbacks: [backup]
  backup:
    kind: chat
    price: { input_per_million_usd: 3, output_per_million_usd: 6, cached_input_per_million_usd: 0.5 }
    deployments:
      - { id: b-1, base_url: ${healthy.baseUrl}, upstream_model: b1 }
`,
  });
  ({ key, keyId, projectId } = await server.newTenant({ balanceUsd: 10 }));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await Promise.all([failing?.close(), healthy?.close()]);
});

async function detailOf(id: string) {
  let found: Awaited<ReturnType<typeof call>> | null = null;
  await vi.waitFor(async () => {
    await flushLog(server);
    found = await call(server.baseUrl, 'GET', `/v1/requests/${id}`, { key });
    expect(found.status).toBe(200);
  });
  return found!.body;
}

describe('a retried, fallen-back, streamed call', () => {
  it('is found by its id with every attempt, the fallback, the served model, cached tokens and cost matching the usage record and balance', async () => {
    const before = (await call(server.baseUrl, 'GET', '/v1/project', { key })).body.balance_usd as number;
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'primary', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('lo');
    const id = res.headers.get('x-request-id')!;

    const detail = await detailOf(id);
    const usage = await server.core.database.db.selectFrom('usage_records').selectAll().where('request_id', '=', id).executeTakeFirstOrThrow();
    const after = (await call(server.baseUrl, 'GET', '/v1/project', { key })).body.balance_usd as number;

    expect(detail).toMatchObject({
      id,
      object: 'request',
      project_id: projectId,
      key_id: keyId,
      route: '/v1/chat/completions',
      wire: 'chat-completions',
      scope: 'v1',
      model_requested: 'primary',
      model: 'backup',
      deployment: 'b-1',
      status: 200,
      error_code: null,
      stream: true,
      fallback: true,
      body_logged: false,
      batch_id: null,
      usage: { input_tokens: 40, output_tokens: 9, cached_input_tokens: 32 },
    });
    expect(detail.attempts.map((a: any) => [a.deployment, a.status])).toEqual([
      [expect.stringMatching(/^p-[12]$/), 503],
      [expect.stringMatching(/^p-[12]$/), 503],
      ['b-1', 200],
    ]);
    expect(new Set(detail.attempts.slice(0, 2).map((a: any) => a.deployment))).toEqual(new Set(['p-1', 'p-2']));
    for (const a of detail.attempts) {
      expect(a.started_ms).toBeGreaterThanOrEqual(0);
      expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(detail.attempts[0].error_code).not.toBeNull();
    // The record's figures are the usage record's, and the balance moved by exactly the cost.
    expect(Number(usage.cached_input_tokens)).toBe(32);
    expect(Number(usage.input_tokens)).toBe(40);
    expect(usage.model).toBe('backup');
    expect(detail.cost_usd).toBe(Number(usage.cost_micros) / 1e6);
    expect(detail.settled_usd).toBe(detail.cost_usd);
    expect(detail.hold_usd).toBeGreaterThanOrEqual(detail.cost_usd);
    expect(Math.round((before - after) * 1e6)).toBe(Number(usage.cost_micros));
    // 8 cached at $3/M + 32 cached at $0.5/M + 9 out at $6/M
    expect(Number(usage.cost_micros)).toBe(8 * 3 + 16 + 9 * 6);
    expect(detail.latency_ms.total).toBeGreaterThanOrEqual(detail.latency_ms.first_byte);
    expect(detail.latency_ms.credit_wait).not.toBeNull();

    const list = await call(server.baseUrl, 'GET', '/v1/requests?status=200&model=backup', { key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: any) => r.id)).toEqual([id]);
    expect(list.body.data[0]).not.toHaveProperty('attempts');
  });
});

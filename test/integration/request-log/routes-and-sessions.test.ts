/**
 * Calls on other routes and how sessions are named: a Responses WebSocket's answers are
 * logged one entry each; a `previous_response_id` chain is one session (named by its
 * root); Claude Code's session header names the session of a Messages call; the tools a
 * model called are named; a refused call is logged with its status and error code.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import { FAST_FLUSH_YAML, flushLog } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;
let tenant: { projectId: string; key: string; keyId: string };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({
    yaml: `${FAST_FLUSH_YAML}models:
  llm:
    kind: chat
    price: { input_per_million_usd: 2, output_per_million_usd: 4 }
    base_url: ${upstream.baseUrl}
`,
  });
  tenant = await server.newTenant({ balanceUsd: 10 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

async function entryOf(id: string): Promise<any> {
  let body: any = null;
  await vi.waitFor(async () => {
    await flushLog(server);
    const res = await call(server.baseUrl, 'GET', `/v1/requests/${id}`, { key: tenant.key });
    expect(res.status).toBe(200);
    body = res.body;
  });
  return body;
}

async function newest(filter: string): Promise<any[]> {
  await flushLog(server);
  return (await call(server.baseUrl, 'GET', `/v1/requests?limit=100&${filter}`, { key: tenant.key })).body.data;
}

describe('other routes', () => {
  it('logs each answer on a Responses WebSocket as a streamed call of the responses wire', async () => {
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${tenant.key}` } });
    const events = await socket.turn({ type: 'response.create', model: 'llm', store: false, input: 'hi over a socket', prompt_cache_key: 'socket-session' });
    expect(events.at(-1)!.type).toBe('response.completed');
    await socket.close();
    let entries: any[] = [];
    await vi.waitFor(async () => {
      entries = await newest('session_id=socket-session');
      expect(entries).toHaveLength(1);
    });
    expect(entries[0]).toMatchObject({ route: '/v1/responses', wire: 'responses', scope: 'v1', stream: true, status: 200, model_requested: 'llm', model: 'llm' });
    expect(entries[0].latency_ms.first_byte).not.toBeNull();
  });

  it('names the session of a previous_response_id chain by its root, and of a Messages call by the Claude Code header', async () => {
    const first = await call(server.baseUrl, 'POST', '/v1/responses', { key: tenant.key, body: { model: 'llm', input: 'turn one' } });
    const second = await call(server.baseUrl, 'POST', '/v1/responses', { key: tenant.key, body: { model: 'llm', input: 'turn two', previous_response_id: first.body.id } });
    expect(second.status).toBe(200);
    const [one, two] = [await entryOf(first.headers.get('x-request-id')!), await entryOf(second.headers.get('x-request-id')!)];
    expect(one.session_id).not.toBeNull();
    expect(two.session_id).toBe(one.session_id);
    const session = await call(server.baseUrl, 'GET', `/v1/requests/sessions/${encodeURIComponent(one.session_id)}`, { key: tenant.key });
    expect(session.body.data.map((r: any) => r.id)).toEqual([one.id, two.id]);

    const messages = await call(server.baseUrl, 'POST', '/v1/messages', {
      key: tenant.key,
      headers: { 'x-claude-code-session-id': '7d3c3a5e-1b7e-4a53-9d3e-0c1f9a1b2c3d', 'anthropic-version': '2023-06-01' },
      body: { model: 'llm', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }], metadata: { user_id: 'user-42' } },
    });
    expect(messages.status).toBe(200);
    expect(await entryOf(messages.headers.get('request-id') ?? messages.headers.get('x-request-id')!)).toMatchObject({
      wire: 'messages',
      session_id: '7d3c3a5e-1b7e-4a53-9d3e-0c1f9a1b2c3d',
      end_user: 'user-42',
      status: 200,
    });
  });

  it('names the tools the model called', async () => {
    upstream.chat({ toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    try {
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
        key: tenant.key,
        body: { model: 'llm', messages: [{ role: 'user', content: 'weather?' }], tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] },
      });
      expect(res.status).toBe(200);
      expect((await entryOf(res.headers.get('x-request-id')!)).tools_called).toEqual(['get_weather']);
    } finally {
      upstream.reset();
    }
  });

  it('logs a refused call with its status and error code', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(await entryOf(res.headers.get('x-request-id')!)).toMatchObject({ status: 400, error_code: 'model_not_found', model_requested: 'no-such-model', model: null, cost_usd: 0 });
    const errors = await newest('status=error');
    expect(errors.map((r: any) => r.id)).toContain(res.headers.get('x-request-id'));
    expect(errors.every((r: any) => r.status >= 400)).toBe(true);
  });
});

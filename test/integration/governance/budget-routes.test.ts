/**
 * A key's budget on each route of one server, keys made through the admin API: the call
 * the budget pays for is served, the next is refused with 429 `budget_exceeded` in the
 * route's own envelope (OpenAI's on chat completions and responses, Anthropic's on
 * /v1/messages, an error event on the Responses WebSocket, a tool error on MCP), naming
 * the window, the limit and the reset, with the reset in a header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import { resetTimeOf, windowSpan } from '../../../src/domain/billing/budget-window.js';

const MODEL = 'budget-model';
let server: TestServer;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // 1,000 micro-dollars a token, 10 input and 10 output tokens: $0.02 a call, held at up to $0.03.
  upstream.chat({ usage: { prompt_tokens: 10, completion_tokens: 10 } });
  server = await startTestServer({
    yaml: `models:\n  ${MODEL}:\n    backend: openai\n    base_url: ${upstream.baseUrl}\n    price: { input_per_million_usd: 1000, output_per_million_usd: 1000 }\n`,
  });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

/** A key with a day budget of $0.03: one call, then $0.01 left, less than any call holds. */
async function budgetedKey(): Promise<string> {
  const { projectId } = await server.newTenant({ balanceUsd: 10 });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const made = await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectId}/keys`, { headers: admin, body: { budget: { limit_usd: 0.03, window: 'day' } } });
  expect(made.status).toBe(200);
  expect(made.body.budget).toEqual({ limit_usd: 0.03, window: 'day' });
  return made.body.key as string;
}

const reset = () => resetTimeOf(windowSpan('day', Date.now()))!;
const refusalMessage = () => new RegExp(`^This key's day budget of \\$0\\.03 has \\$0\\.01 left, less than this request needs \\(at least \\$0\\.0[0-9]+\\); it resets at ${reset()}\\.$`);

const chatBody = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

describe('a key budget on every route', () => {
  it('chat completions: OpenAI’s envelope, with the reset in x-sluice-budget-reset and retry-after', async () => {
    const key = await budgetedKey();
    expect((await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: chatBody })).status).toBe(200);
    const refused = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: chatBody });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { message: expect.stringMatching(refusalMessage()), type: 'rate_limit_exceeded', code: 'budget_exceeded', param: null } });
    expect(refused.headers.get('x-sluice-budget-reset')).toBe(reset());
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('/v1/messages: Anthropic’s rate_limit_error envelope', async () => {
    const key = await budgetedKey();
    const headers = { 'anthropic-version': '2023-06-01' };
    expect((await call(server.baseUrl, 'POST', '/v1/messages', { key, headers, body: chatBody })).status).toBe(200);
    const refused = await call(server.baseUrl, 'POST', '/v1/messages', { key, headers, body: chatBody });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringMatching(refusalMessage()) }, request_id: expect.any(String) });
    expect(refused.headers.get('x-sluice-budget-reset')).toBe(reset());
  });

  it('/v1/responses over HTTP and the WebSocket', async () => {
    const key = await budgetedKey();
    const body = { model: MODEL, input: 'hi', max_output_tokens: 10 };
    expect((await call(server.baseUrl, 'POST', '/v1/responses', { key, body })).status).toBe(200);
    const refused = await call(server.baseUrl, 'POST', '/v1/responses', { key, body });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { message: expect.stringMatching(refusalMessage()), type: 'rate_limit_exceeded', code: 'budget_exceeded', param: null } });
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${key}` } });
    const turn = await socket.turn({ type: 'response.create', ...body });
    expect(turn.at(-1)).toEqual({
      type: 'error',
      status: 429,
      error: { message: expect.stringMatching(refusalMessage()), type: 'rate_limit_exceeded', code: 'budget_exceeded', param: null },
    });
    await socket.close();
  });

  it('MCP: a tool error carrying the status and OpenAI’s envelope', async () => {
    const key = await budgetedKey();
    const toolCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: chatBody } });
    const post = async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: toolCall,
      });
      const text = await res.text();
      return JSON.parse(res.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)![1]! : text);
    };
    expect((await post()).result.isError).toBeUndefined();
    const refused = await post();
    expect(refused.result).toEqual({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(refusalMessage()) }],
      structuredContent: { status: 429, error: { message: expect.stringMatching(refusalMessage()), type: 'rate_limit_exceeded', code: 'budget_exceeded', param: null } },
    });
  });
});

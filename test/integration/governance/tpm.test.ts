/**
 * A key's tokens per minute (`tpm`), on real servers against a fake engine that reports
 * 10 input and 10 output tokens a call: calls are served while the minute's settled
 * tokens plus the call's estimate fit the limit; the next is refused 429 in the route's
 * own envelope (OpenAI's on chat completions, Anthropic's on /v1/messages, a tool error
 * on MCP) with retry-after and the x-ratelimit-*-tokens headers; the minute frees when the
 * servers' clock passes it (an injected clock: nothing sleeps a minute); a call that set
 * no cap is lowered rather than refused; a key without tpm is never refused by it; two
 * replicas on Redis count one window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import { jsonl, startBatch, waitForBatch, isTerminal } from '../batches/support/batch-helpers.js';

const MODEL = 'tpm-model';
const withRedis = await redisReachable();
if (!withRedis && process.env.SLUICE_TEST_REDIS_URL) throw new Error(`Redis at ${REDIS_URL} does not answer`);

/** Each call settles 20 tokens (the fake engine's usage). */
const SETTLED = 20;
const chatBody = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
/** Its estimate: "hi" bounded by its 2 bytes, 8 framing tokens for the text and 8 for the conversation, and the cap of 10. */
const ESTIMATE = 2 + 8 + 8 + 10;
const messagesHeaders = { 'anthropic-version': '2023-06-01' };

/** The servers' clock: a minute's second second, moved on by the tests. */
const clock = { now: Math.floor(Date.now() / 60_000) * 60_000 + 1_000, nowMs: () => clock.now };
const secondsLeft = () => String(Math.ceil((60_000 - (clock.now % 60_000)) / 1000));

const refusal = (left: number) =>
  `Rate limit exceeded: this API key's limit of 100 tokens per minute has ${left} left this minute, and this request needs up to ${ESTIMATE} tokens; retry in ${secondsLeft()} s.`;

let upstream: FakeUpstream;
const yaml = () => `models:\n  ${MODEL}:\n    backend: openai\n    base_url: ${upstream.baseUrl}\n    max_output_tokens: 4096\n`;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.chat({ usage: { prompt_tokens: 10, completion_tokens: 10 } });
});
afterAll(async () => upstream?.close());

/** A key with `policy`, made through the admin API. */
async function keyWith(server: TestServer, policy: Record<string, unknown>): Promise<string> {
  const { projectId } = await server.newTenant({ balanceUsd: 10 });
  const made = await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectId}/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: policy });
  expect(made.status).toBe(200);
  expect(made.body.tpm).toBe(policy.tpm ?? null);
  return made.body.key as string;
}

const chat = (server: TestServer, key: string, body: unknown = chatBody) => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body });
const tokenHeaders = (res: { headers: Headers }) => [res.headers.get('x-ratelimit-limit-tokens'), res.headers.get('x-ratelimit-remaining-tokens')];

describe('tpm per key, in memory', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ yaml: yaml(), overrides: { clock } });
  });
  afterAll(async () => server?.close());

  it('chat completions: served while settled tokens plus the estimate fit, then 429 until the minute frees', async () => {
    const key = await keyWith(server, { tpm: 100 });
    // 0, 20, 40 and 60 used: each estimate of 28 fits in 100; with 80 used it does not.
    for (const used of [0, 20, 40, 60]) {
      const served = await chat(server, key);
      expect([served.status, ...tokenHeaders(served)]).toEqual([200, '100', String(100 - used)]);
    }
    const refused = await chat(server, key);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { message: refusal(100 - 4 * SETTLED), type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } });
    expect(refused.headers.get('retry-after')).toBe(secondsLeft());
    expect(tokenHeaders(refused)).toEqual(['100', '20']);
    // The rpm refusal's headers come with it, as on every call.
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('600');
    expect(refused.headers.get('x-should-retry')).toBeNull();

    clock.now += 60_000;
    const next = await chat(server, key);
    expect([next.status, ...tokenHeaders(next)]).toEqual([200, '100', '100']);
  });

  it('/v1/messages: Anthropic’s rate_limit_error envelope, the same headers', async () => {
    const key = await keyWith(server, { tpm: 100 });
    for (let i = 0; i < 4; i++) expect((await call(server.baseUrl, 'POST', '/v1/messages', { key, headers: messagesHeaders, body: chatBody })).status).toBe(200);
    const refused = await call(server.baseUrl, 'POST', '/v1/messages', { key, headers: messagesHeaders, body: chatBody });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: refusal(20) }, request_id: expect.any(String) });
    expect(refused.headers.get('retry-after')).toBe(secondsLeft());
    expect(tokenHeaders(refused)).toEqual(['100', '20']);
    // The same key's minute on chat completions: one window per key, whatever the route.
    expect((await chat(server, key)).status).toBe(429);
  });

  it('MCP: the refusal is a tool error with the status and OpenAI’s envelope', async () => {
    const key = await keyWith(server, { tpm: 100 });
    const post = async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: chatBody } }),
      });
      const text = await res.text();
      return JSON.parse(res.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)![1]! : text);
    };
    for (let i = 0; i < 4; i++) expect((await post()).result.isError).toBeUndefined();
    expect((await post()).result).toEqual({
      isError: true,
      content: [{ type: 'text', text: refusal(20) }],
      structuredContent: { status: 429, error: { message: refusal(20), type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } },
    });
  });

  it('/v1/responses over HTTP and the WebSocket', async () => {
    const key = await keyWith(server, { tpm: 100 });
    const body = { model: MODEL, input: 'hi', max_output_tokens: 10, store: false };
    for (let i = 0; i < 4; i++) expect((await call(server.baseUrl, 'POST', '/v1/responses', { key, body })).status).toBe(200);
    const message = expect.stringMatching(/^Rate limit exceeded: this API key's limit of 100 tokens per minute has 20 left this minute, and this request needs up to 2[0-9] tokens; retry in [0-9]+ s\.$/);
    const refused = await call(server.baseUrl, 'POST', '/v1/responses', { key, body });
    expect([refused.status, refused.body, ...tokenHeaders(refused)]).toEqual([429, { error: { message, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } }, '100', '20']);
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${key}` } });
    const turn = await socket.turn({ type: 'response.create', ...body });
    expect(turn.at(-1)).toEqual({ type: 'error', status: 429, error: { message, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } });
    await socket.close();
  });

  it('a call that set no cap is lowered to what the minute has left instead of being refused', async () => {
    const key = await keyWith(server, { tpm: 100 });
    expect((await chat(server, key)).status).toBe(200);
    upstream.reset();
    upstream.chat({ usage: { prompt_tokens: 10, completion_tokens: 10 } });
    // 80 left; the 4,096 default and the 1,024 allowance do not fit; 80 less the 18 input tokens estimated does.
    const lowered = await chat(server, key, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect([lowered.status, lowered.headers.get('x-sluice-output-cap-lowered'), ...tokenHeaders(lowered)]).toEqual([200, '62', '100', '80']);
    const [sent] = await upstream.waitForRequests(1, '/chat/completions');
    expect(sent!.body.max_tokens).toBe(62);
  });

  it('a request that does not fit in a whole minute is refused for good', async () => {
    const key = await keyWith(server, { tpm: 100 });
    const refused = await chat(server, key, { ...chatBody, max_tokens: 83 });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      message: "Request too large: this request needs up to 101 tokens, more than this API key's limit of 100 tokens per minute.",
      type: 'rate_limit_exceeded',
      code: 'rate_limit_exceeded',
      param: null,
    });
    expect([refused.headers.get('x-should-retry'), refused.headers.get('retry-after')]).toEqual(['false', null]);
    expect((await chat(server, key, { ...chatBody, max_tokens: 82 })).status).toBe(200);
  });

  it('a key without tpm is never refused by it, and gets no token headers', async () => {
    const key = await keyWith(server, {});
    for (let i = 0; i < 8; i++) {
      const served = await chat(server, key);
      expect([served.status, ...tokenHeaders(served)]).toEqual([200, null, null]);
    }
  });
});

describe('tpm per key with Redis unreachable', () => {
  it('each replica counts in its own memory meanwhile', async () => {
    const offline = await startTestServer({ yaml: yaml(), env: { REDIS_URL: 'redis://127.0.0.1:1' }, overrides: { clock } });
    try {
      const key = await keyWith(offline, { tpm: 100 });
      for (const used of [0, 20, 40, 60]) expect(tokenHeaders(await chat(offline, key))).toEqual(['100', String(100 - used)]);
      const refused = await chat(offline, key);
      expect([refused.status, refused.body.error.message]).toEqual([429, refusal(20)]);
    } finally {
      await offline.close();
    }
  });
});

describe('tpm per key in a batch', () => {
  let server: TestServer;
  beforeAll(async () => {
    // One line at a time, on leases the moved clock does not expire.
    const batches = 'batches: { global_concurrency: 1, per_batch_concurrency: 1, lease_seconds: 600, retry_base_ms: 20 }\n';
    server = await startTestServer({ yaml: yaml() + batches, overrides: { clock }, startWorkers: true });
  });
  afterAll(async () => server?.close());

  it('a line over the limit waits for the minute to free instead of failing', async () => {
    const key = await keyWith(server, { tpm: 100 });
    upstream.reset();
    upstream.chat({ usage: { prompt_tokens: 10, completion_tokens: 10 } });
    const lines = Array.from({ length: 6 }, (_, i) => ({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: chatBody }));
    const { batch } = await startBatch(server.baseUrl, key, jsonl(lines));
    // Four lines fit in the minute (80 tokens settled); the fifth's estimate does not.
    const four = await waitForBatch(server.baseUrl, key, batch.id, (b) => b.request_counts.completed === 4);
    expect(four.request_counts).toEqual({ total: 6, completed: 4, failed: 0 });
    // Past a few of the runner's waits (1 s each), the line still waits: nothing more ran, nothing failed.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await waitForBatch(server.baseUrl, key, batch.id, () => true)).request_counts).toEqual({ total: 6, completed: 4, failed: 0 });
    expect(upstream.count('/chat/completions')).toBe(4);
    clock.now += 60_000;
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect([done.status, done.request_counts]).toEqual(['completed', { total: 6, completed: 6, failed: 0 }]);
    expect(upstream.count('/chat/completions')).toBe(6);
  });
});

describe.runIf(withRedis)('tpm per key across two replicas on Redis', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const place = `rate_limits: { redis_prefix: "tpm-${Date.now()}-${Math.random().toString(36).slice(2)}" }\n`;
    a = await startTestServer({ yaml: yaml() + place, env: { REDIS_URL }, overrides: { clock } });
    // The second replica shares the first one's database, as replicas do.
    b = await startTestServer({ yaml: yaml() + place, env: { REDIS_URL, ...a.dataEnv }, overrides: { clock } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('the replicas count one key in one window, and it frees for both', async () => {
    const key = await keyWith(a, { tpm: 100 });
    for (const [i, used] of [0, 20, 40, 60].entries()) {
      const served = await chat(i % 2 === 0 ? a : b, key);
      expect([served.status, ...tokenHeaders(served)]).toEqual([200, '100', String(used === 0 ? 100 : 100 - used)]);
    }
    for (const replica of [a, b]) {
      const refused = await chat(replica, key);
      expect([refused.status, refused.body.error.message, ...tokenHeaders(refused)]).toEqual([429, refusal(20), '100', '20']);
    }
    clock.now += 60_000;
    for (const replica of [b, a]) expect((await chat(replica, key)).status).toBe(200);
  });
});

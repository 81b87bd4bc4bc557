/** `stream: true` on /v1/chat/completions: SSE relayed chunk by chunk, metering, disconnects, failures. */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { fail, handler, stream, type RecordedRequest } from '../../helpers/fake-upstream.js';
import { balanceOf, rawPost, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const streamBody = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-oss-120b',
  stream: true,
  messages: [{ role: 'user', content: 'Hello' }],
  ...extra,
});

/** `data:` payloads of an SSE body, JSON-parsed except `[DONE]` (an error event's `event: error` line dropped). */
function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      if (block.startsWith('event: error\n')) block = block.slice('event: error\n'.length);
      expect(block.startsWith('data: ')).toBe(true);
      const data = block.slice('data: '.length);
      return data === '[DONE]' ? '[DONE]' : JSON.parse(data);
    });
}

async function readAll(client: ReturnType<typeof rawPost>): Promise<string> {
  let text = '';
  for await (const chunk of client.chunks()) text += chunk.text;
  return text;
}

/**
 * An upstream stream that sends `first`, then holds the rest (and the end of the stream)
 * until open() — or a fallback, so a relay that buffers fails the test instead of hanging it.
 */
function heldStream(first: string[], rest: string[], fallbackMs = 10_000) {
  let open!: () => void;
  let byFallback = false;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const sse = (res: ServerResponse, delta: Record<string, unknown>, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  const behavior = handler(async (_req: RecordedRequest, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const content of first) sse(res, { content });
    const fallback = setTimeout(() => {
      byFallback = true;
      open();
    }, fallbackMs);
    await opened;
    clearTimeout(fallback);
    for (const content of rest) sse(res, { content });
    sse(res, {}, 'stop');
    res.end('data: [DONE]\n\n');
  });
  return { behavior, open: () => open(), openedByFallback: () => byFallback };
}

const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 3000) => {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('relaying', () => {
  it('relays each upstream chunk as it arrives and ends with [DONE]', async () => {
    // The upstream holds back everything after 'Hel' until the client has received 'Hel':
    // a relay that buffered would never deliver it, and the gate would open only by its fallback.
    const gate = heldStream(['Hel'], ['lo', ' world']);
    env.upstream.enqueue('/chat/completions', gate.behavior);
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody());
    const res = await client.response;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-request-id']).toMatch(/^req_/);

    let text = '';
    for await (const chunk of client.chunks()) {
      text += chunk.text;
      if (text.includes('"Hel"')) gate.open();
    }
    expect(gate.openedByFallback()).toBe(false);
    const all = events(text);
    const [first] = all as any[];
    expect(first.id).toMatch(/^chatcmpl-/);
    const base = { id: first.id, object: 'chat.completion.chunk', created: first.created, model: 'gpt-oss-120b', system_fingerprint: null, service_tier: 'default' };
    expect(all).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'lo' }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: ' world' }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
      '[DONE]',
    ]);

    const upstreamBody = env.upstream.requests[0]!.body;
    expect(upstreamBody).toEqual({
      model: 'openai/gpt-oss-120b',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("delivers the upstream's first chunk to the client while the upstream still holds the rest", async () => {
    const gate = heldStream(['first'], []);
    env.upstream.enqueue('/chat/completions', gate.behavior);
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody());
    for await (const chunk of client.chunks()) {
      expect(chunk.text).toContain('"first"');
      gate.open();
      break;
    }
    expect(gate.openedByFallback()).toBe(false);
    client.disconnect();
  });

  it('with include_usage, adds usage: null to every chunk and a final usage chunk, and meters that usage', async () => {
    env.upstream.chat({ content: 'Hi there', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody({ stream_options: { include_usage: true } }));
    const all = events(await readAll(client)) as any[];
    expect(all.slice(0, -1).every((e) => 'usage' in e)).toBe(true);
    expect(all.map((e) => (e === '[DONE]' ? e : e.choices[0]?.delta ?? 'usage'))).toEqual([
      { role: 'assistant', content: 'Hi ' },
      { content: 'there' },
      {},
      'usage',
      '[DONE]',
    ]);
    expect(all.slice(0, 3).map((e) => e.usage)).toEqual([null, null, null]);
    expect(all[3].choices).toEqual([]);
    expect(all[3].usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 3,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ route: '/v1/chat/completions', inputTokens: 12, outputTokens: 3, costMicros: 4, status: 200 });
    // 12 × 0.15 + 3 × 0.60 = 3.6 µ$ → 4
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 4);
  });

  it('counts the tokens itself when the upstream sends no usage', async () => {
    env.upstream.enqueue('/chat/completions', stream(['Hello ', 'from ', 'the fake upstream.'], { usage: null }));
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody({ stream_options: { include_usage: true } }));
    const all = events(await readAll(client)) as any[];
    // No tokenizer for this upstream model: ⌈bytes / 4⌉ — "Hello" is 5 bytes → 2; the 29-byte answer → 8.
    expect(all.at(-2).usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 8, total_tokens: 10 });
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ inputTokens: 2, outputTokens: 8, status: 200 });
  });

  it('relays reasoning deltas as `reasoning`, and tolerates keep-alive comments and CRLF line ends', async () => {
    env.upstream.enqueue(
      '/chat/completions',
      handler((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null = null) =>
          `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\r\n\r\n`;
        res.write(': ping\r\n\r\n');
        res.write(chunk({ reasoning_content: 'Let me think.' }));
        res.write(chunk({ content: 'Done.' }));
        res.write(chunk({}, 'stop'));
        res.end('data: [DONE]\r\n\r\n');
      }),
    );
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody());
    const all = events(await readAll(client)) as any[];
    expect(all.map((e) => (e === '[DONE]' ? e : e.choices[0].delta))).toEqual([
      // The engine's field as sent, and Sluice's name for it.
      { role: 'assistant', reasoning_content: 'Let me think.', reasoning: 'Let me think.' },
      { content: 'Done.' },
      {},
      '[DONE]',
    ]);
  });

  it('streams a task model as one delta', async () => {
    env.upstream.chat({ content: 'a short summary.' });
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody({ model: 't5-small' }));
    const all = events(await readAll(client)) as any[];
    expect(all.map((e) => (e === '[DONE]' ? e : e.choices[0].delta))).toEqual([{ role: 'assistant', content: 'a short summary.' }, {}, '[DONE]']);
    expect(env.upstream.requests[0]!.body.stream).toBeUndefined();
  });
});

describe('failures and disconnects', () => {
  it('answers a plain JSON error, unbilled, when the upstream fails before streaming', async () => {
    env.upstream.enqueue('/chat/completions', fail(503, 'no capacity'));
    const tenant = await env.server.newTenant();
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: streamBody() });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // The stream was handed over before the upstream answered: none of its headers stay on the error.
    for (const name of ['cache-control', 'x-accel-buffering', 'trailer']) expect(res.headers.get(name)).toBeNull();
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.body.error).toEqual({ message: 'Upstream error for model gpt-oss-120b (status 503): no capacity', type: 'internal_error', code: 'upstream_error', param: null });
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });

  it('answers a refusal at admission as a plain JSON error, with no upstream call', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0 });
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: streamBody() });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBeNull();
    expect(res.body.error.code).toBe('insufficient_quota');
    expect(env.upstream.count()).toBe(0);
  });

  it('validates before streaming', async () => {
    const tenant = await env.server.newTenant();
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'gpt-oss-120b', stream: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('messages');
    expect(env.upstream.count()).toBe(0);
  });

  it('ends with an error event (no [DONE]) and bills only what was delivered when the upstream drops mid-stream', async () => {
    env.upstream.enqueue('/chat/completions', stream(['one ', 'two ', 'three'], { closeAfter: 2, delayMs: 20 }));
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody());
    const all = events(await readAll(client)) as any[];
    expect(all.slice(0, 2).map((e) => e.choices[0].delta.content)).toEqual(['one ', 'two ']);
    expect(all[2]).toEqual({
      error: {
        message: 'Upstream for model gpt-oss-120b is unreachable or closed the connection (UND_ERR_SOCKET)',
        type: 'internal_error',
        code: 'upstream_error',
        param: null,
      },
    });
    expect(all).toHaveLength(3);
    expect(env.upstream.count('/chat/completions')).toBe(1);
    await waitFor(async () => (await usageOf(env.server, tenant.projectId)).length === 1, 'the usage record');
    const [record] = await usageOf(env.server, tenant.projectId);
    // Estimated (no tokenizer): "Hello" → 2 tokens in; "one two " (8 bytes) → 2 tokens out.
    expect(record).toMatchObject({ model: 'gpt-oss-120b', inputTokens: 2, outputTokens: 2, status: 502 });
  });

  it('aborts the upstream when the client disconnects, and bills the tokens generated so far', async () => {
    env.upstream.enqueue('/chat/completions', stream(['alpha ', 'beta ', 'gamma ', 'delta '], { delayMs: 300 }));
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, streamBody());
    for await (const chunk of client.chunks()) {
      expect(chunk.text).toContain('"alpha "');
      break;
    }
    client.disconnect();
    const [aborted] = await env.upstream.waitForAborted(1);
    expect(aborted!.completed).toBe(false);
    await waitFor(async () => (await usageOf(env.server, tenant.projectId)).length === 1, 'the usage record');
    const [record] = await usageOf(env.server, tenant.projectId);
    // Estimated (no tokenizer): "Hello" → 2 tokens in; "alpha " (6 bytes) → 2 tokens out.
    expect(record).toMatchObject({ model: 'gpt-oss-120b', inputTokens: 2, outputTokens: 2, costMicros: 2, status: 499 });
  });
});

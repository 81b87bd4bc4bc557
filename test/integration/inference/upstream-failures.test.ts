/** Upstream failures on the non-streaming path: the error mapping, retries, timeouts, disconnects, and no billing. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { destroy, fail, json, stall, startFakeUpstream } from '../../helpers/fake-upstream.js';
import { balanceOf, rawPost, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';
import { refusedPort, vacantPort } from '../../helpers/refused-port.js';

let env: InferenceEnv;
let closedPort: number;


beforeAll(async () => {
  closedPort = await refusedPort();
  env = await startInferenceEnv({
    extra: {
      'deepseek-v4-flash': { base_url: `http://127.0.0.1:${closedPort}/v1` },
      'LFM2.5-1.2B-Thinking': { timeout_ms: 300 },
    },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const chat = (key: string, body: unknown) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body });
const hello = (model = 'gpt-oss-120b') => ({ model, messages: [{ role: 'user', content: 'Hello' }] });

describe('upstream failures', () => {
  it('maps an upstream 5xx to 502 upstream_error and bills nothing', async () => {
    env.upstream.enqueue('/chat/completions', fail(503, 'engine overloaded'));
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: { message: 'Upstream error for model gpt-oss-120b (status 503): engine overloaded', type: 'internal_error', code: 'upstream_error', param: null },
    });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before);
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });

  it('maps an upstream 429 to a retryable 429 and keeps its retry-after', async () => {
    env.upstream.enqueue('/chat/completions', { type: 'json', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '7' } });
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.body).toEqual({
      error: { message: 'Upstream for model gpt-oss-120b is rate limited: slow down', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null },
    });
  });

  it("passes an upstream 400 through with the upstream's message, param and code", async () => {
    env.upstream.enqueue('/chat/completions', fail(400, 'max_tokens is too large: 99999', { code: 'invalid_value', param: 'max_tokens' }));
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'max_tokens is too large: 99999', type: 'invalid_request_error', code: 'invalid_value', param: 'max_tokens' } });
  });

  it('passes an upstream 404 through', async () => {
    env.upstream.enqueue('/chat/completions', json({ detail: 'model not loaded' }, 404));
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe('model not loaded');
  });

  it('answers 502 (not 401) when the upstream rejects Sluice\'s own credentials', async () => {
    env.upstream.enqueue('/chat/completions', fail(401, 'bad key'));
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('Upstream for model gpt-oss-120b refused the request (status 401) (check models.<id>.api_key_env): bad key');
  });

  it('answers 502 when the upstream drops the connection, without resending the request', async () => {
    env.upstream.enqueue('/chat/completions', destroy());
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    expect(res.body.error.message).toMatch(/^Upstream for model gpt-oss-120b is unreachable or closed the connection \(UND_ERR_SOCKET\)$/);
    expect(env.upstream.count('/chat/completions')).toBe(1);
  });

  it('answers 502 upstream_error when nothing listens at the base URL', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('deepseek-v4-flash'));
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({
      message: 'Upstream for model deepseek-v4-flash is unreachable or closed the connection (ECONNREFUSED)',
      type: 'internal_error',
      code: 'upstream_error',
      param: null,
    });
  });

  it('retries a refused connection and succeeds once the upstream is listening', async () => {
    const port = await vacantPort();
    const local = await startInferenceEnv({ extra: { 'gpt-oss-120b': { base_url: `http://127.0.0.1:${port}/v1` } } });
    try {
      const tenant = await local.server.newTenant();
      const pending = call(local.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello() });
      await new Promise((resolve) => setTimeout(resolve, 15));
      const late = await startFakeUpstream({ port });
      try {
        const res = await pending;
        expect(res.status).toBe(200);
        expect(late.count('/chat/completions')).toBe(1);
      } finally {
        await late.close();
      }
    } finally {
      await local.close();
    }
  });

  it('times out a stalled upstream (binding timeout_ms), aborts it, and answers 502 upstream_timeout', async () => {
    env.upstream.setDefault('/chat/completions', stall());
    const tenant = await env.server.newTenant();
    const started = Date.now();
    const res = await chat(tenant.key, hello('LFM2.5-1.2B-Thinking'));
    const elapsed = Date.now() - started;
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({ message: 'Upstream for model LFM2.5-1.2B-Thinking did not answer in time', type: 'internal_error', code: 'upstream_timeout', param: null });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3000);
    await env.upstream.waitForAborted(1);
  });

  it('answers 502 for an upstream answer without choices', async () => {
    env.upstream.enqueue('/chat/completions', json({ object: 'chat.completion', choices: [] }));
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('Upstream for model gpt-oss-120b answered unexpectedly: the answer has no choices');
  });

  it('stops the upstream request when the client goes away, and bills nothing', async () => {
    env.upstream.setDefault('/chat/completions', stall());
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, hello());
    await env.upstream.waitForRequests(1);
    client.disconnect();
    const [aborted] = await env.upstream.waitForAborted(1);
    expect(aborted!.path).toBe('/chat/completions');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });
});

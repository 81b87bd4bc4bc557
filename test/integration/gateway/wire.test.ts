/**
 * Where the gateway's wire differs from /v1, as declarations of its scope: gw-usage as an
 * announced trailer and in the final usage chunk of a stream; a failed Responses object
 * for errors of /gateway/v1/responses; 420 for an input over the model's limit; a rate
 * limit per agent. The same route modules on /v1 answer as before.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signedCall, signedStream as signedStreamTo, startGatewayEnv, type GatewayEnv } from './setup.js';

let env: GatewayEnv;
beforeAll(async () => {
  env = await startGatewayEnv({ models: { 'llama-3.1-8b-instruct-fast': { context_length: 64 } } });
});
afterAll(() => env.close());
beforeEach(() => {
  env.upstream.reset();
  env.intermediary.reset();
});

const LONG = 'word '.repeat(400);

const signedStream = (path: string, body: unknown, requestId: string) => signedStreamTo(env.server.baseUrl, path, body, requestId);

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.startsWith('data: ') && f !== 'data: [DONE]')
    .map((f) => JSON.parse(f.slice(6)));

describe('streams', () => {
  it('gw-usage is announced, sent as a trailer, repeated in the final usage chunk, and equals the report', async () => {
    const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } };
    const answer = await signedStream('/gateway/v1/chat/completions', body, 'gwreq_stream_1');
    expect(answer.status).toBe(200);
    expect(answer.headers.trailer).toBe('gw-usage');
    expect(answer.headers['gw-usage']).toBeUndefined();
    expect(answer.trailers['gw-usage']).toBe('input_tokens=11, output_tokens=7');
    const chunks = chunksOf(answer.text);
    const last = chunks.at(-1);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(last.gw_usage).toBe('input_tokens=11, output_tokens=7');
    expect(chunks.slice(0, -1).every((c) => c.gw_usage === undefined)).toBe(true);
    await env.intermediary.waitForAccepted(2);
    expect(Object.fromEntries([...env.intermediary.accepted.values()].map((e) => [e.meter, e.quantity]))).toEqual({ input_tokens: 11, output_tokens: 7 });
  });

  it('without include_usage, the trailer alone carries it', async () => {
    const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }], stream: true };
    const answer = await signedStream('/gateway/v1/chat/completions', body, 'gwreq_stream_2');
    expect(answer.trailers['gw-usage']).toBe('input_tokens=11, output_tokens=7');
    expect(chunksOf(answer.text).some((c) => 'gw_usage' in c)).toBe(false);
  });

  it('a streamed response carries gw_usage on its last event (response.completed), and the trailer', async () => {
    const body = { model: 'gpt-oss-120b', input: 'Hi', stream: true };
    const answer = await signedStream('/gateway/v1/responses', body, 'gwreq_stream_3');
    expect(answer.status).toBe(200);
    expect(answer.trailers['gw-usage']).toBe('input_tokens=11, output_tokens=7');
    const events = answer.text
      .split('\n\n')
      .filter((f) => f.trim() !== '')
      .map((f) => JSON.parse(f.split('\n')[1]!.slice(6)));
    const last = events.at(-1);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(last.gw_usage).toBe('input_tokens=11, output_tokens=7');
    expect(events.slice(0, -1).every((e) => e.gw_usage === undefined)).toBe(true);
  });
});

describe('errors', () => {
  it('/gateway/v1/responses answers a client error as a failed Responses object', async () => {
    const answer = await signedCall(env.server.baseUrl, '/gateway/v1/responses', { model: 'gpt-oss-120b', instructions: 'x' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      object: 'response',
      status: 'failed',
      error: { type: 'invalid_request_error', param: 'input' },
      model: 'gpt-oss-120b',
      instructions: 'x',
      output: [],
      usage: null,
    });
    expect(answer.body.error.message).toBeTypeOf('string');
    expect(answer.body.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(answer.headers.get('gw-usage')).toBeNull();
  });

  it('an input over the model limit is 420 context_length_exceeded: envelope on chat, failed object on responses', async () => {
    const chat = await signedCall(env.server.baseUrl, '/gateway/v1/chat/completions', { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: LONG }] });
    expect(chat.status).toBe(420);
    expect(chat.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' });
    expect(chat.body.error.message).toMatch(/^Input exceeds max_tokens \(64\) for model: llama-3.1-8b-instruct-fast/);
    const responses = await signedCall(env.server.baseUrl, '/gateway/v1/responses', { model: 'llama-3.1-8b-instruct-fast', input: LONG });
    expect(responses.status).toBe(420);
    expect(responses.body).toMatchObject({ object: 'response', status: 'failed', error: { param: 'input', code: 'context_length_exceeded' } });
    expect(env.upstream.count('/chat/completions')).toBe(0);
    expect(env.intermediary.checks).toHaveLength(0);
  });

  it('the signature 401 and the 402 keep their own bodies on /responses', async () => {
    const unsigned = await signedCall(env.server.baseUrl, '/gateway/v1/responses', { model: 'gpt-oss-120b', input: 'x' }, { signature: null, requestId: 'gwreq_echo' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({ error: 'invalid_gateway_signature' });
    expect(unsigned.headers.get('gw-request-id')).toBe('gwreq_echo');
    env.intermediary.check('agt_1', { kind: 'deny', reason: 'plan_expired' });
    const denied = await signedCall(env.server.baseUrl, '/gateway/v1/responses', { model: 'gpt-oss-120b', input: 'x' });
    expect(denied.status).toBe(402);
    expect(denied.body).toMatchObject({ error: 'payment_required', reason: 'plan_expired', serviceSlug: 'gpt-oss-120b' });
  });

  it('the same modules on /v1 keep the envelope and 400', async () => {
    const tenant = await env.server.newTenant();
    const headers = { 'x-api-key': tenant.key, 'content-type': 'application/json' };
    const responses = await fetch(`${env.server.baseUrl}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'gpt-oss-120b' }) });
    expect(responses.status).toBe(400);
    expect(((await responses.json()) as { error: { param: string } }).error.param).toBe('input');
    const chat = await fetch(`${env.server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: LONG }] }),
    });
    expect(chat.status).toBe(400);
    expect(chat.headers.get('trailer')).toBeNull();
  });
});

describe('rate limit per agent', () => {
  let limited: GatewayEnv;
  beforeAll(async () => {
    limited = await startGatewayEnv({ yamlTail: 'gateway:\n  rate_limit_rpm: 2\n' });
  });
  afterAll(() => limited.close());

  it('counts each agent on its own', async () => {
    const body = { model: 'all-minilm-l6-v2', input: 'x' };
    const path = '/gateway/v1/embeddings';
    expect((await signedCall(limited.server.baseUrl, path, body, { agentId: 'agt_a' })).status).toBe(200);
    expect((await signedCall(limited.server.baseUrl, path, body, { agentId: 'agt_a' })).status).toBe(200);
    const third = await signedCall(limited.server.baseUrl, path, body, { agentId: 'agt_a' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'rate_limit_exceeded', message: 'Rate limit exceeded: too many requests per minute for this agent' });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signedCall(limited.server.baseUrl, path, body, { agentId: 'agt_b' })).status).toBe(200);
  });
});

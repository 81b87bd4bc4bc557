/**
 * Anthropic's Messages routes wherever chat is served: the signed gateway (`/gateway/v1`,
 * paid by the intermediary, gw_usage on the event that carries the usage) and the
 * storefront (`{storefront}/gateway/v1`, paid from the caller's Credits, count_tokens
 * free), each in Anthropic's envelope under its scope's authentication; and the batch
 * runner, when `batches.endpoints` names `/v1/messages`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { gatewayEnvVars, signedCall, signedStream } from '../gateway/setup.js';
import { inferenceYaml } from '../inference/setup.js';
import { createBatch, isTerminal, jsonl, resultsOf, uploadOk, waitForBatch } from '../batches/support/batch-helpers.js';
import { post, startStorefront, type StorefrontEnv } from '../storefront/support.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { newId } from '../../../src/domain/shared/ids.js';

const MODEL = 'gpt-oss-120b';
const BODY = { model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] };
const MESSAGE = {
  id: expect.stringMatching(/^msg_/),
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [{ type: 'text', text: 'Hello from the fake upstream.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
};

/** Named SSE frames as `{event, data}`. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const [event, data] = f.split('\n');
      return { event: event!.replace(/^event: /, ''), data: JSON.parse(data!.replace(/^data: /, '')) };
    });

describe('the signed gateway, and a batch', () => {
  let upstream: FakeUpstream;
  let intermediary: FakeIntermediary;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    intermediary = await startFakeIntermediary();
    server = await startTestServer({
      yaml: `${inferenceYaml(upstream.baseUrl)}batches:\n  endpoints: [/v1/chat/completions, /v1/messages]\n`,
      env: gatewayEnvVars(intermediary.baseUrl),
      startWorkers: true,
    });
    ({ key } = await server.newTenant({ balanceUsd: 5 }));
  });
  afterAll(async () => {
    await server?.close();
    await intermediary?.close();
    await upstream?.close();
  });

  it('answers a message, counts tokens, and refuses bad input in Anthropic envelope', async () => {
    const answer = await signedCall(server.baseUrl, '/gateway/v1/messages', BODY);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual(MESSAGE);
    const counted = await signedCall(server.baseUrl, '/gateway/v1/messages/count_tokens', { model: MODEL, messages: BODY.messages });
    expect(counted.status).toBe(200);
    expect(counted.body).toEqual({ input_tokens: expect.any(Number) });
    expect(counted.headers.get('x-sluice-token-count-method')).toBe('estimate');
    for (const [path, body] of [['/gateway/v1/messages', { ...BODY, model: 'no-such-model' }], ['/gateway/v1/messages', { ...BODY, model: 'no-such-model', stream: true }], ['/gateway/v1/messages/count_tokens', { model: 'no-such-model', messages: BODY.messages }]] as const) {
      const unknown = await signedCall(server.baseUrl, path, body);
      expect([path, unknown.status, unknown.body]).toEqual([path, 404, { type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('no-such-model') }, request_id: expect.any(String) }]);
    }
    const refused = await signedCall(server.baseUrl, '/gateway/v1/messages', { ...BODY, max_tokens: -1 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens must be an integer of at least 1' }, request_id: expect.any(String) });
  });

  it('streams with gw_usage on message_delta, and the usage as a trailer', async () => {
    const streamed = await signedStream(server.baseUrl, '/gateway/v1/messages', { ...BODY, stream: true }, 'gwreq_messages_1', 'agt_messages');
    expect(streamed.status).toBe(200);
    expect(streamed.trailers['gw-usage']).toBe('input_tokens=11, output_tokens=7');
    const frames = framesOf(streamed.text);
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'ping', 'content_block_start', ...frames.slice(3, -3).map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
    expect(frames.length).toBeGreaterThan(6);
    expect(frames.every((f) => f.event === f.data.type)).toBe(true);
    expect(frames.slice(3, -3).map((f) => f.data.delta.text).join('')).toBe('Hello from the fake upstream.');
    const delta = frames.find((f) => f.event === 'message_delta')!.data;
    expect(delta.gw_usage).toBe('input_tokens=11, output_tokens=7');
    expect(frames.filter((f) => f.data.gw_usage !== undefined)).toHaveLength(1);
  });

  it('is in the OpenAPI document, from its one definition, on /v1 and the gateway', async () => {
    const document = (await fetch(`${server.baseUrl}/v1/openapi.json`).then((r) => r.json())) as any;
    for (const path of ['/v1/messages', '/gateway/v1/messages']) {
      const operation = document.paths[path].post;
      expect(operation.requestBody.content['application/json'].schema.required).toEqual(['model', 'max_tokens', 'messages']);
      expect(operation.responses['200'].content['text/event-stream']).toBeDefined();
      expect(operation.responses['400'].content['application/json'].schema.properties.error.properties.type).toBeDefined();
      expect(operation.responses['400'].content['application/json'].schema.properties.request_id).toBeDefined();
    }
    expect(document.paths['/v1/messages/count_tokens'].post.responses['200'].content['application/json'].schema.properties.input_tokens).toBeDefined();
  });

  it('runs the lines of a batch on /v1/messages', async () => {
    const lines = ['one', 'two'].map((say) => ({ custom_id: say, method: 'POST', url: '/v1/messages', body: { ...BODY, messages: [{ role: 'user', content: say }] } }));
    const fileId = await uploadOk(server.baseUrl, key, jsonl(lines));
    const created = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/messages', completion_window: '24h' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const batch = await waitForBatch(server.baseUrl, key, created.body.id, isTerminal);
    expect(batch.status).toBe('completed');
    const { output, errors } = await resultsOf(server.baseUrl, key, batch);
    expect(errors).toEqual([]);
    expect(output.map((line) => [line.custom_id, line.response.status_code, line.response.body]).sort()).toEqual([
      ['one', 200, MESSAGE],
      ['two', 200, MESSAGE],
    ]);
  });
});

describe('the storefront', () => {
  let env: StorefrontEnv;
  beforeAll(async () => {
    env = await startStorefront({ agents: 1 });
  });
  afterAll(async () => env?.close());

  async function receiptWith(micros: number): Promise<string> {
    const receipt = newReceiptId();
    await env.server.features.storefront.services!.store.purchase({
      id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'receipt', receiptId: receiptHash(receipt) }, kind: 'purchase',
      amountMicros: micros, paymentRef: `test:${receipt}`, rail: 'x402', detail: null, createdAtMs: Date.now(),
    });
    return receipt;
  }
  const balanceOf = async (receipt: string) =>
    (await env.server.features.storefront.services!.store.account('sluice', { kind: 'receipt', receiptId: receiptHash(receipt) }))!.balanceMicros;

  it("answers a message paid from the caller's Credits; count_tokens is free", async () => {
    const receipt = await receiptWith(10_000);
    const headers = { authorization: `Receipt ${receipt}` };
    const answer = await post(env, '/gateway/v1/messages', BODY, headers);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual(MESSAGE);
    // 11 input tokens at $1/M and 7 output tokens at $2/M: 25 micro-dollars.
    expect(await balanceOf(receipt)).toBe(10_000 - 25);
    const counted = await post(env, '/gateway/v1/messages/count_tokens', { model: MODEL, messages: BODY.messages }, headers);
    expect(counted.status).toBe(200);
    expect(await balanceOf(receipt)).toBe(10_000 - 25);
  });

  it('refuses in Anthropic envelope under its own authentication', async () => {
    const receipt = await receiptWith(10_000);
    const bad = await post(env, '/gateway/v1/messages', { ...BODY, messages: [] }, { authorization: `Receipt ${receipt}` });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'messages must be a non-empty array of messages' }, request_id: expect.any(String) });
    for (const [path, body] of [['/gateway/v1/messages', { ...BODY, model: 'no-such-model' }], ['/gateway/v1/messages', { ...BODY, model: 'no-such-model', stream: true }], ['/gateway/v1/messages/count_tokens', { model: 'no-such-model', messages: BODY.messages }]] as const) {
      const unknown = await post(env, path, body, { authorization: `Receipt ${receipt}` });
      expect([path, unknown.status, unknown.body]).toEqual([path, 404, { type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('no-such-model') }, request_id: expect.any(String) }]);
    }
    const anonymous = await post(env, '/gateway/v1/messages', BODY);
    expect(anonymous.status).toBe(401);
  });
});

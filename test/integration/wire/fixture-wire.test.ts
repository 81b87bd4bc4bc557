/**
 * A wire is served by being in the list: the toy wire (fixture-wire.ts), added to the list
 * the app is assembled with and named nowhere else, answers on /v1 (JSON and its named
 * stream), on the signed gateway (with gw_usage on the event its descriptor says carries
 * the usage), answers its errors in its own envelope on both, runs the lines of a batch on
 * its endpoint, and is in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIRE_FORMATS } from '../../../src/wire/formats.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { gatewayEnvVars, signedCall, signedStream } from '../gateway/setup.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { inferenceYaml } from '../inference/setup.js';
import { createBatch, isTerminal, jsonl, resultsOf, uploadOk, waitForBatch } from '../batches/support/batch-helpers.js';
import { echoWire } from './fixture-wire.js';

const MODEL = 'gpt-oss-120b';

let upstream: FakeUpstream;
let intermediary: FakeIntermediary;
let server: TestServer;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  intermediary = await startFakeIntermediary();
  server = await startTestServer({
    // batches.endpoints may name the toy wire's endpoint: the app assembled with it batches it.
    yaml: `${inferenceYaml(upstream.baseUrl)}batches:\n  endpoints: [/v1/chat/completions, /v1/echo]\n`,
    env: gatewayEnvVars(intermediary.baseUrl),
    overrides: { wireFormats: [...WIRE_FORMATS, echoWire] },
    startWorkers: true,
  });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});
afterAll(async () => {
  await server?.close();
  await intermediary?.close();
  await upstream?.close();
});

/** Named SSE frames as `{event, data}`. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const [event, data] = f.split('\n');
      return { event: event!.replace(/^event: /, ''), data: JSON.parse(data!.replace(/^data: /, '')) };
    });

const answer = { kind: 'echo.answer', text: expect.any(String), tokens: { in: 11, out: 7 } };

describe('a wire format added to the list', () => {
  it('is served on /v1: its body validated, its answer written by its writer, its errors in its envelope', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/echo', { key, body: { model: MODEL, say: 'Hi' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual(answer);
    const refused = await call(server.baseUrl, 'POST', '/v1/echo', { key, body: { model: MODEL } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ echo_error: { message: expect.any(String), status: 400 } });
  });

  it('streams on /v1 in its framing: named events, no [DONE]', async () => {
    const response = await fetch(`${server.baseUrl}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: MODEL, say: 'Hi', stream: true }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    expect(text).not.toContain('[DONE]');
    const frames = framesOf(text);
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.slice(0, -1).every((f) => f.event === 'echo.delta')).toBe(true);
    expect(frames.at(-1)).toEqual({ event: 'echo.done', data: { type: 'echo.done', tokens: { in: 11, out: 7 } } });
  });

  it('is served on the gateway, and gw_usage goes on the event its descriptor says carries the usage', async () => {
    const json = await signedCall(server.baseUrl, '/gateway/v1/echo', { model: MODEL, say: 'Hi' });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body).toEqual(answer);
    const refused = await signedCall(server.baseUrl, '/gateway/v1/echo', { model: MODEL });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ echo_error: { message: expect.any(String), status: 400 } });

    const streamed = await signedStream(server.baseUrl, '/gateway/v1/echo', { model: MODEL, say: 'Hi', stream: true }, 'gwreq_echo_1', 'agt_echo');
    expect(streamed.status).toBe(200);
    expect(streamed.trailers['gw-usage']).toBe('input_tokens=11, output_tokens=7');
    const frames = framesOf(streamed.text);
    expect(frames.at(-1)!.data.gw_usage).toBe('input_tokens=11, output_tokens=7');
    expect(frames.slice(0, -1).every((f) => f.data.gw_usage === undefined)).toBe(true);
  });

  it('runs the lines of a batch on its endpoint', async () => {
    const lines = ['one', 'two'].map((say) => ({ custom_id: say, method: 'POST', url: '/v1/echo', body: { model: MODEL, say } }));
    const fileId = await uploadOk(server.baseUrl, key, jsonl(lines));
    const created = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/echo', completion_window: '24h' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const batch = await waitForBatch(server.baseUrl, key, created.body.id, isTerminal);
    expect(batch.status).toBe('completed');
    const { output, errors } = await resultsOf(server.baseUrl, key, batch);
    expect(errors).toEqual([]);
    expect(output.map((line) => [line.custom_id, line.response.status_code, line.response.body]).sort()).toEqual([
      ['one', 200, answer],
      ['two', 200, answer],
    ]);
  });

  it('is in the OpenAPI document, with its answer and its stream', async () => {
    const document = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body;
    const operation = document.paths['/v1/echo'].post;
    expect(operation.summary).toBe(echoWire.summary);
    expect(operation.requestBody.content['application/json'].schema.required).toEqual(['model', 'say']);
    const ok = operation.responses['200'].content;
    expect(ok['application/json'].schema.properties.kind).toBeDefined();
    expect(ok['text/event-stream'].schema.description).toBe('server-sent events, `echo.delta` then `echo.done`');
    expect(document.paths['/gateway/v1/echo'].post.summary).toBe(echoWire.summary);
  });
});

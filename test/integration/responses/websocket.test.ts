/**
 * The Responses API's WebSocket mode on /v1/responses, with real clients: the `openai`
 * SDK's ResponsesWS for the tool loop, `ws` by hand for the rest. Each `response.create`
 * runs through the same pipeline as POST /v1/responses (billing and usage records match);
 * `previous_response_id` continues within the socket with `store: false`; `generate: false`
 * warms up; one response at a time; bad messages get an error event and the socket stays
 * usable; credentials are checked at the upgrade and while the socket is open.
 */
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { handler, startFakeUpstream, stream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { DEFAULT_CHAT, streamChunk, toolCallDeltas, wireUsage, wordsOf } from '../../helpers/fake-upstream-answers.js';
import { openTestSocket, wsUrlOf, type TestSocket } from '../../helpers/responses-socket.js';
import { balanceOf, inferenceYaml, usageOf } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';
const TOOLS = [{ type: 'function' as const, name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false }];
let upstream: FakeUpstream;
let server: TestServer;
let key: string;
let projectId: string;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), env: { AUTH_CACHE_TTL_MS: '200' } });
  ({ key, projectId } = await server.newTenant());
});
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await server.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

async function open(options: { headers?: Record<string, string>; protocols?: string[] } = { headers: { authorization: `Bearer ${key}` } }) {
  const socket = await openTestSocket(wsUrlOf(server.baseUrl), options);
  sockets.push(socket);
  return socket;
}

/** An engine that calls `read_file` until the conversation holds two tool results, then answers. */
function twoToolCallsThenAnswer() {
  return handler((req, res) => {
    const messages: Array<{ role?: string }> = req.body?.messages ?? [];
    const results = messages.filter((m) => m.role === 'tool').length;
    const model = String(req.body?.model ?? '');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (chunk: string | Record<string, unknown>) => res.write(`data: ${JSON.stringify(streamChunk(model, chunk))}\n\n`);
    const call = { id: `call_${results + 1}`, name: 'read_file', arguments: `{"path":"f${results + 1}.txt"}` };
    for (const chunk of results < 2 ? toolCallDeltas([call]) : wordsOf('Both files read.')) write(chunk);
    write({ choices: [{ index: 0, delta: {}, finish_reason: results < 2 ? 'tool_calls' : 'stop' }] });
    if (req.body?.stream_options?.include_usage) write({ choices: [], usage: wireUsage(DEFAULT_CHAT.usage) });
    res.end('data: [DONE]\n\n');
  });
}

/** Reads the SDK socket's events of one response. */
function sdkTurn(rws: ResponsesWS, event: Parameters<ResponsesWS['send']>[0]): Promise<Array<Record<string, any>>> {
  return new Promise((resolve, reject) => {
    const events: Array<Record<string, any>> = [];
    const onEvent = (e: Record<string, any>) => {
      events.push(e);
      if (e.type === 'response.completed' || e.type === 'response.failed' || e.type === 'response.incomplete') {
        rws.off('event', onEvent);
        rws.off('error', onError);
        resolve(events);
      }
    };
    const onError = (err: Error) => {
      rws.off('event', onEvent);
      rws.off('error', onError);
      reject(err);
    };
    rws.on('event', onEvent);
    rws.on('error', onError);
    rws.send(event);
  });
}

describe('a tool loop over one WebSocket (openai SDK ResponsesWS)', () => {
  it('runs three turns with previous_response_id and store:false; the engine receives the whole conversation; nothing is stored', async () => {
    upstream.setDefault('/chat/completions', twoToolCallsThenAnswer());
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const rws = new ResponsesWS(client);
    try {
      const first = await sdkTurn(rws, { type: 'response.create', model: MODEL, store: false, tools: TOOLS, input: 'Read f1 and f2.' });
      expect(first.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
      const done1 = first.at(-1)!.response;
      expect(done1.status).toBe('completed');
      expect(done1.store).toBe(false);
      const call1 = done1.output.find((item: any) => item.type === 'function_call');
      expect(call1).toMatchObject({ call_id: 'call_1', name: 'read_file', arguments: '{"path":"f1.txt"}' });

      const second = await sdkTurn(rws, {
        type: 'response.create', model: MODEL, store: false, tools: TOOLS, previous_response_id: done1.id,
        input: [{ type: 'function_call_output', call_id: 'call_1', output: 'one' }],
      });
      const done2 = second.at(-1)!.response;
      expect(done2.previous_response_id).toBe(done1.id);
      expect(done2.output.find((item: any) => item.type === 'function_call')).toMatchObject({ call_id: 'call_2' });

      const third = await sdkTurn(rws, {
        type: 'response.create', model: MODEL, store: false, tools: TOOLS, previous_response_id: done2.id,
        input: [{ type: 'function_call_output', call_id: 'call_2', output: 'two' }],
      });
      const done3 = third.at(-1)!.response;
      expect(done3.status).toBe('completed');
      expect(done3.output.find((item: any) => item.type === 'message').content[0].text).toBe('Both files read.');
      // Every event carries its sequence number, in order, as over HTTP.
      expect(third.map((e) => e.sequence_number)).toEqual(third.map((_, i) => i));

      // The third turn's engine call held the whole conversation, from the socket's memory.
      const roles = upstream.requests[2]!.body.messages.map((m: any) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
      expect(upstream.requests[2]!.body.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: 'one' });
      // store:false: nothing was stored.
      const stored = await call(server.baseUrl, 'GET', `/v1/responses/${done3.id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(stored.status).toBe(404);
    } finally {
      rws.close();
    }
  });
});

describe('warm-up and continuation', () => {
  it('generate:false completes at once with no output and no engine call; a later turn continues it', async () => {
    const socket = await open();
    const warm = await socket.turn({ type: 'response.create', generate: false, model: MODEL, store: false, instructions: 'Be brief.', input: 'My name is Ada.' });
    expect(warm.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    const warmed = warm.at(-1)!.response;
    expect(warmed).toMatchObject({ status: 'completed', output: [], usage: { input_tokens: 0, output_tokens: 0 } });
    expect(upstream.count('/chat/completions')).toBe(0);

    const next = await socket.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: warmed.id, input: 'What is my name?' });
    expect(next.at(-1)!.response.status).toBe('completed');
    expect(upstream.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
  });

  it('an id this socket does not hold, with store:false, is previous_response_not_found; the socket stays usable', async () => {
    const socket = await open();
    const [error] = await socket.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: 'resp_unknown', input: 'hi' });
    expect(error).toEqual({
      type: 'error',
      status: 404,
      error: { message: "Previous response with id 'resp_unknown' not found.", type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' },
    });
    expect((await socket.turn({ type: 'response.create', model: MODEL, input: 'hi' })).at(-1)!.type).toBe('response.completed');
  });

  it('a response that failed is not kept: its id continues nothing, and the one before it still does', async () => {
    const socket = await open();
    const first = (await socket.turn({ type: 'response.create', model: MODEL, store: false, input: 'one' })).at(-1)!.response;
    upstream.enqueue('/chat/completions', stream(['cut ', 'short', ' here'], { closeAfter: 2, delayMs: 50 }));
    const failed = await socket.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: first.id, input: 'two' });
    expect(failed.map((e) => e.type).slice(-2)).toEqual(['error', 'response.failed']);
    const failedId = failed.at(-1)!.response.id;
    const [refused] = await socket.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: failedId, input: 'three' });
    expect(refused).toMatchObject({ type: 'error', status: 404, error: { code: 'previous_response_not_found' } });
    const again = await socket.turn({ type: 'response.create', model: MODEL, store: false, previous_response_id: first.id, input: 'two again' });
    expect(again.at(-1)!.type).toBe('response.completed');
  });

  it('a stored response (store:true) made over HTTP is continued on a socket', async () => {
    const first = await call(server.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${key}` }, body: { model: MODEL, input: 'Remember 42.' } });
    const socket = await open();
    const events = await socket.turn({ type: 'response.create', model: MODEL, previous_response_id: first.body.id, input: 'What number?' });
    expect(events.at(-1)!.response.previous_response_id).toBe(first.body.id);
    expect(upstream.requests[1]!.body.messages.map((m: any) => m.content)).toEqual(['Remember 42.', DEFAULT_CHAT.content, 'What number?']);
  });
});

describe('one response at a time, and bad messages', () => {
  it('a second response.create while one runs is refused with an error event; the first completes', async () => {
    upstream.setDefault('/chat/completions', stream(['slow ', 'answer'], { firstDelayMs: 300 }));
    const socket = await open();
    socket.send({ type: 'response.create', model: MODEL, input: 'first' });
    socket.send({ type: 'response.create', model: MODEL, input: 'second' });
    const events: Array<Record<string, any>> = [];
    while (events.at(-1)?.type !== 'response.completed') events.push(await socket.next());
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toEqual([
      {
        type: 'error',
        status: 409,
        error: { message: 'A response is already running on this WebSocket: wait for it to end, or open another WebSocket', type: 'invalid_request_error', code: 'response_in_progress', param: null },
      },
    ]);
    expect(upstream.count('/chat/completions')).toBe(1);
  });

  it('non-JSON, binary, non-object and type-less messages and unknown event types get error events; the socket stays usable', async () => {
    const socket = await open();
    const refusal = async (send: () => void) => {
      send();
      return socket.next();
    };
    expect((await refusal(() => socket.sendRaw('{not json'))).error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' });
    expect((await refusal(() => socket.sendRaw(Buffer.from([1, 2, 3]), { binary: true }))).error).toMatchObject({ code: 'invalid_message' });
    expect((await refusal(() => socket.sendRaw('[1,2]'))).error).toMatchObject({ code: 'invalid_event' });
    expect((await refusal(() => socket.sendRaw('{"model":"x"}'))).error).toMatchObject({ code: 'invalid_event', param: 'type' });
    const unknown = await refusal(() => socket.send({ type: 'response.steer', input: 'x' }));
    expect(unknown).toEqual({
      type: 'error',
      status: 400,
      error: { message: 'Unknown event type "response.steer": this WebSocket takes "response.create"', type: 'invalid_request_error', code: 'unknown_event_type', param: 'type' },
    });
    expect((await socket.turn({ type: 'response.create', model: MODEL, input: 'still here?' })).at(-1)!.type).toBe('response.completed');
  });

  it('a bad body is the error HTTP would answer, as an error event; the socket stays usable', async () => {
    const socket = await open();
    const body = { model: MODEL, input: 42 };
    const http = await call(server.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${key}` }, body });
    expect(http.status).toBe(400);
    const [event] = await socket.turn({ type: 'response.create', ...body });
    expect(event).toEqual({ type: 'error', status: 400, ...http.body });
    const unknownHttp = await call(server.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${key}` }, body: { model: 'no-such-model', input: 'hi' } });
    const [unknownModel] = await socket.turn({ type: 'response.create', model: 'no-such-model', input: 'hi' });
    expect(unknownModel).toEqual({ type: 'error', status: unknownHttp.status, ...unknownHttp.body });
    expect(unknownModel!.error.code).toBe('model_not_found');
    const [background] = await socket.turn({ type: 'response.create', model: MODEL, input: 'hi', background: true });
    expect(background).toMatchObject({ status: 400, error: { param: 'background', code: 'unsupported_parameter' } });
    const [lane] = await socket.turn({ type: 'response.create', model: MODEL, input: 'hi', stream_id: 'a' });
    expect(lane).toMatchObject({ status: 400, error: { param: 'stream_id', code: 'unsupported_parameter' } });
    expect(upstream.count('/chat/completions')).toBe(0);
    expect((await socket.turn({ type: 'response.create', model: MODEL, input: 'ok' })).at(-1)!.type).toBe('response.completed');
  });
});

describe('billing', () => {
  it('a turn over the socket is billed and recorded as the same request over HTTP', async () => {
    const { key: tenantKey, projectId: tenant } = await server.newTenant();
    const before = await balanceOf(server, tenant);
    await call(server.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${tenantKey}` }, body: { model: MODEL, input: 'hi', stream: true } });
    const afterHttp = await balanceOf(server, tenant);
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { 'x-api-key': tenantKey } });
    sockets.push(socket);
    expect((await socket.turn({ type: 'response.create', model: MODEL, input: 'hi' })).at(-1)!.type).toBe('response.completed');
    await socket.close();
    const afterSocket = await balanceOf(server, tenant);
    expect(before - afterHttp).toBeGreaterThan(0);
    expect(afterHttp - afterSocket).toBe(before - afterHttp);
    const records = (await usageOf(server, tenant)).sort((a, b) => a.createdAtMs - b.createdAtMs);
    expect(records).toHaveLength(2);
    const shape = (r: (typeof records)[number]) => ({ route: r.route, model: r.model, inputTokens: r.inputTokens, outputTokens: r.outputTokens, costMicros: r.costMicros, status: r.status, keyId: r.keyId });
    expect(shape(records[1]!)).toEqual(shape(records[0]!));
    expect(records[1]!.route).toBe('/v1/responses');
    expect(records[1]!.requestId).not.toBe(records[0]!.requestId);
    expect(projectId).not.toBe(tenant);
  });
});

describe('credentials', () => {
  const refusedWith = (options: { headers?: Record<string, string>; protocols?: string[] }) =>
    openTestSocket(wsUrlOf(server.baseUrl), options).then(
      () => 'opened',
      (err: Error) => err.message,
    );

  it('an upgrade without a key, or with a wrong one, is refused with the status HTTP answers', async () => {
    expect(await refusedWith({})).toBe('Unexpected server response: 401');
    const wrong = await call(server.baseUrl, 'POST', '/v1/responses', { headers: { authorization: 'Bearer sk-wrong' }, body: { model: MODEL, input: 'x' } });
    expect(wrong.status).toBe(403);
    expect(await refusedWith({ headers: { authorization: 'Bearer sk-wrong' } })).toBe('Unexpected server response: 403');
  });

  it('only /v1 takes the WebSocket: the console (a session cookie) and the signed gateway do not', async () => {
    expect(server.app.hasRoute({ method: 'GET', url: '/v1/responses' })).toBe(true);
    expect(server.app.hasRoute({ method: 'GET', url: '/console/api/v1/responses' })).toBe(false);
    expect(server.app.hasRoute({ method: 'GET', url: '/gateway/v1/responses' })).toBe(false);
    for (const path of ['/console/api/v1/responses', '/gateway/v1/responses']) {
      const outcome = await openTestSocket(wsUrlOf(server.baseUrl, path), { headers: { authorization: `Bearer ${key}` } }).then(
        (socket) => (socket.ws.terminate(), 'opened'),
        (err: Error) => err.message,
      );
      expect(outcome, path).toMatch(/^Unexpected server response: 4\d\d$/);
    }
  });

  it('a GET without an upgrade is told the path takes a WebSocket', async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/responses', { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: 'GET /v1/responses takes a WebSocket upgrade only; send a request with POST /v1/responses', type: 'invalid_request_error', code: 'websocket_upgrade_required', param: null },
    });
  });

  it('x-api-key and the openai-insecure-api-key subprotocol admit; the key is never selected back', async () => {
    const byHeader = await open({ headers: { 'x-api-key': key } });
    expect(byHeader.protocol).toBe('');
    const browser = await open({ protocols: ['responses', `openai-insecure-api-key.${key}`] });
    expect(browser.protocol).toBe('responses');
    expect((await browser.turn({ type: 'response.create', model: MODEL, input: 'hi' })).at(-1)!.type).toBe('response.completed');
    expect(await refusedWith({ protocols: ['responses', 'openai-insecure-api-key.sk-wrong'] })).toMatch(/^Unexpected server response: 40[13]$/);
  });

  it("a revoked key's open socket gets an error event and closes (1008)", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectId}/keys`, { headers: admin, body: { name: 'ws' } });
    const socket = await open({ headers: { authorization: `Bearer ${created.body.key}` } });
    expect((await call(server.baseUrl, 'POST', `/admin/v1/keys/${created.body.id}/revoke`, { headers: admin })).status).toBe(200);
    const event = await socket.next();
    expect(event).toMatchObject({ type: 'error', error: { code: 'invalid_api_key' } });
    expect(await socket.closed).toEqual({ code: 1008, reason: 'invalid_credentials' });
  });
});

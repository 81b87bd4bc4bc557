/**
 * The limits of a Responses WebSocket, each with its documented close (docs/responses.md):
 * a message over `max_message_bytes` (1009, before it is read whole), idle time (1000
 * `idle_timeout`), age (an error event `websocket_connection_limit_reached`, then 1000),
 * and sockets per key (an error event, then 1008). Tiny configured values; no timing is
 * asserted beyond "it closes".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestSocket, wsUrlOf, type TestSocket } from '../../helpers/responses-socket.js';
import { inferenceYaml } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';
let upstream: FakeUpstream;
const servers: TestServer[] = [];
const sockets: TestSocket[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  for (const server of servers) await server.close();
  await upstream.close();
});

async function serverWith(websocket: string): Promise<{ server: TestServer; key: string }> {
  const server = await startTestServer({ yaml: `${inferenceYaml(upstream.baseUrl)}responses:\n  websocket: ${websocket}\n` });
  servers.push(server);
  const { key } = await server.newTenant();
  return { server, key };
}

async function open(server: TestServer, key: string): Promise<TestSocket> {
  const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${key}` } });
  sockets.push(socket);
  return socket;
}

describe('WebSocket limits', () => {
  it('a message over max_message_bytes closes the socket with 1009; the server keeps serving', async () => {
    const { server, key } = await serverWith('{ max_message_bytes: 1024 }');
    const socket = await open(server, key);
    socket.send({ type: 'response.create', model: MODEL, input: 'x'.repeat(2048) });
    expect((await socket.closed).code).toBe(1009);
    const again = await open(server, key);
    expect((await again.turn({ type: 'response.create', model: MODEL, input: 'small' })).at(-1)!.type).toBe('response.completed');
  });

  it('a socket idle past idle_timeout_seconds closes with 1000 idle_timeout', async () => {
    const { server, key } = await serverWith('{ idle_timeout_seconds: 1 }');
    const socket = await open(server, key);
    expect((await socket.turn({ type: 'response.create', model: MODEL, input: 'hi' })).at(-1)!.type).toBe('response.completed');
    expect(await socket.closed).toEqual({ code: 1000, reason: 'idle_timeout' });
  });

  it('a socket past max_age_seconds gets websocket_connection_limit_reached and closes with 1000', async () => {
    const { server, key } = await serverWith('{ max_age_seconds: 1 }');
    const socket = await open(server, key);
    expect(await socket.next(5_000)).toEqual({
      type: 'error',
      status: 400,
      error: { message: 'This WebSocket reached its maximum age: open a new one to continue', type: 'invalid_request_error', code: 'websocket_connection_limit_reached', param: null },
    });
    expect(await socket.closed).toEqual({ code: 1000, reason: 'websocket_connection_limit_reached' });
  });

  it('one socket over max_per_key gets an error event and closes with 1008; closing one makes room', async () => {
    const { server, key } = await serverWith('{ max_per_key: 2 }');
    const first = await open(server, key);
    await open(server, key);
    const third = await open(server, key);
    expect(await third.next()).toEqual({
      type: 'error',
      status: 429,
      error: { message: 'Too many WebSockets open for this API key (at most 2 at once)', type: 'rate_limit_exceeded', code: 'websocket_limit_reached', param: null },
    });
    expect(await third.closed).toEqual({ code: 1008, reason: 'websocket_limit_reached' });
    await first.close();
    const fourth = await open(server, key);
    expect((await fourth.turn({ type: 'response.create', model: MODEL, input: 'hi' })).at(-1)!.type).toBe('response.completed');
  });

  it('a server that shuts down closes its sockets with 1001', async () => {
    const { server, key } = await serverWith('{}');
    const socket = await open(server, key);
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    expect(await socket.closed).toEqual({ code: 1001, reason: 'server_shutting_down' });
  });

  it('the open sockets are a metric; an upgrade is a request served, not one in flight while its socket is open', async () => {
    const { server, key } = await serverWith('{}');
    const socket = await open(server, key);
    const gauge = (name: string) => server.core.metrics.registry.getSingleMetricAsString(name);
    expect(await gauge('sluice_websockets_open')).toContain('sluice_websockets_open 1');
    expect(await gauge('sluice_http_requests_in_flight')).toContain('sluice_http_requests_in_flight 0');
    await socket.close();
    expect(await gauge('sluice_websockets_open')).toContain('sluice_websockets_open 0');
    expect(await gauge('sluice_http_requests_in_flight')).toContain('sluice_http_requests_in_flight 0');
  });
});

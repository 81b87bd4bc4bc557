/**
 * `/mcp` answers bad input with JSON-RPC errors, never a 5xx: a body that is not JSON (or
 * nests too deep) is a parse error (-32700), a message that is not JSON-RPC an invalid
 * request (-32600), an unknown method -32601, wrong parameter types and unknown tools
 * -32602; a body over the limit, a bad key or a wrong content type keeps its HTTP status
 * with the REST error's type and code in `data`. The 2025 session operations (GET, DELETE)
 * are 405 on this stateless endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_BODY_LIMIT_BYTES } from '../../../src/http/scopes/mcp.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant());
});
afterAll(async () => server?.close());

const ACCEPT = 'application/json, text/event-stream';

/** A POST to /mcp; an event-stream answer is read as its one message. */
async function post(body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)![1]! : text;
  return { status: res.status, body: JSON.parse(json) };
}

const rpc = (method: string, params?: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

describe('bad input on /mcp', () => {
  it('answers a body that is not JSON with a parse error naming where it stops', async () => {
    expect(await post('{bad')).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32700,
          // The REST route's own wording of where the JSON stops.
          message: expect.stringMatching(/^Invalid JSON body at line 1, column 2: Expected (a )?property name/),
          data: { status: 400, type: 'invalid_request_error', code: 'invalid_json', param: null },
        },
      },
    });
  });

  it('answers an empty body with a parse error', async () => {
    const res = await post('');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32700, message: 'Request body is empty; send a JSON object', data: { code: 'invalid_json' } });
  });

  it('answers JSON nested past the limit with a parse error before anything reads it', async () => {
    const res = await post(`${'['.repeat(100)}${']'.repeat(100)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32700, message: 'Request body nests deeper than 64 levels, the limit for JSON bodies', data: { code: 'json_too_deep' } });
  });

  it.each([
    ['a string', '"tools/list"', null],
    ['a message without jsonrpc', JSON.stringify({ id: 1, method: 'tools/list' }), 1],
  ])('answers %s with an invalid request', async (_name, body, id) => {
    expect(await post(body)).toEqual({
      status: 400,
      body: { jsonrpc: '2.0', id, error: { code: -32600, message: 'Bad Request: the request body is not a valid JSON-RPC message' } },
    });
  });

  it('answers an unknown method with -32601', async () => {
    expect(await post(rpc('tools/explode'))).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } } });
  });

  it.each([
    ['a tool name that is a number', { name: 7, arguments: {} }, /^Invalid tools\/call request: .*params.*name/s],
    ['arguments that are a string', { name: 'chat', arguments: 'hello' }, /^Invalid tools\/call request: .*params.*arguments/s],
    ['an unknown tool', { name: 'nosuch', arguments: {} }, /^Tool nosuch not found$/],
  ])('answers %s with -32602', async (_name, params, message) => {
    const res = await post(rpc('tools/call', params), { authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: expect.stringMatching(message) } });
  });

  it('answers a body over the limit with 413 and an invalid request, before the SDK reads it', async () => {
    const huge = rpc('tools/call', { name: 'batch_get', arguments: { batch_id: 'x'.repeat(MCP_BODY_LIMIT_BYTES) } });
    expect(await post(huge, { authorization: `Bearer ${key}` })).toEqual({
      status: 413,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Request body is too large', data: { status: 413, type: 'invalid_request_error', code: 'request_too_large', param: null } },
      },
    });
  });

  it('refuses a wrong key, even for discovery, with the REST status and code', async () => {
    const res = await post(rpc('tools/list'), { authorization: 'Bearer sk-not-a-key' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid credentials', data: { status: 403, type: 'authentication_error', code: 'invalid_api_key', param: null } },
    });
  });

  it('answers a body that is not application/json with an invalid request', async () => {
    const res = await post(rpc('tools/list'), { 'content-type': 'text/plain' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32600, data: { code: 'invalid_content_type' } });
  });

  it('answers GET and DELETE (session operations) with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${server.baseUrl}/mcp`, { method, headers: { accept: ACCEPT } });
      expect(res.status, method).toBe(405);
      await res.arrayBuffer();
    }
  });
});

describe('mcp.prefix', () => {
  it('moves the endpoint (a trailing slash is dropped), and the default path is free', async () => {
    const moved = await startTestServer({ yaml: 'mcp:\n  prefix: /agents/mcp/\n' });
    try {
      const list = await fetch(`${moved.baseUrl}/agents/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT },
        body: rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }),
      });
      expect(list.status).toBe(200);
      expect(await list.text()).toContain('"serverInfo":{"name":"sluice"');
      const old = await fetch(`${moved.baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: rpc('tools/list') });
      expect(old.status).toBe(404);
      await old.arrayBuffer();
    } finally {
      await moved.close();
    }
  });
});

describe('requests with no credential', () => {
  it('are rate-limited by address, with the per-key limit, and answered as a JSON-RPC error', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_RPM: '2' } });
    try {
      const list = () =>
        fetch(`${limited.baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: rpc('tools/list') });
      for (let i = 0; i < 2; i++) {
        const ok = await list();
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
      }
      const refused = await list();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Rate limit exceeded: too many requests per minute without a credential from this address',
          data: { status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null },
        },
      });
    } finally {
      await limited.close();
    }
  });
});

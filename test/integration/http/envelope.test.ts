/** x-request-id on every kind of response, CORS preflight, and the one error envelope (500 never leaks). */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';

const REQUEST_ID = /^req_[0-9a-f]{24}$/;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

type Response = Awaited<ReturnType<typeof call>>;

describe('response envelope', () => {
  let server: TestServer;
  const logLines: Record<string, any>[] = [];
  const seenIds: string[] = [];

  /** Asserts the x-request-id header and remembers it for the uniqueness check. */
  function requestIdOf(res: Response): string {
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(REQUEST_ID);
    seenIds.push(id!);
    return id!;
  }

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        callback();
      },
    });
    server = await startTestServer({
      yaml: 'server:\n  body_limit_mb: 1\n',
      env: { RATE_LIMIT_RPM: '5' },
      overrides: { logger: pino({ level: 'info' }, sink) },
      extendApp: registerProbeRoutes,
    });
  });
  afterAll(async () => server.close());

  it('200: success', async () => {
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: tenant.key });
    expect(res.status).toBe(200);
    requestIdOf(res);
    const health = await call(server.baseUrl, 'GET', '/healthz');
    expect(health.status).toBe(200);
    requestIdOf(health);
  });

  it('401 and 403', async () => {
    const missing = await call(server.baseUrl, 'GET', `${PROBE}/whoami`);
    expect(missing.status).toBe(401);
    requestIdOf(missing);
    const invalid = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: 'nope' });
    expect(invalid.status).toBe(403);
    requestIdOf(invalid);
  });

  it('404 unknown route, at the root and under /v1 and /admin/v1, in the envelope', async () => {
    for (const path of ['/nope', '/v1/nope', '/admin/v1/nope']) {
      const res = await call(server.baseUrl, 'GET', `${path}?x=1`);
      expect(res.status, path).toBe(404);
      requestIdOf(res);
      expect(res.body, path).toEqual({
        error: { message: `Unknown route: GET ${path}`, type: 'invalid_request_error', code: 'unknown_route', param: null },
      });
    }
  });

  it('400 for a URL that cannot be decoded (rejected before routing), in the envelope', async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/%zz');
    expect(res.status).toBe(400);
    requestIdOf(res);
    expect(res.body).toEqual({
      error: { message: "'/v1/%zz' is not a valid url component", type: 'invalid_request_error', code: 'invalid_request_error', param: null },
    });
  });

  it('400 malformed JSON', async () => {
    const tenant = await server.newTenant();
    const bad = (message: string) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_json', param: null } });
    const v1 = await call(server.baseUrl, 'POST', `${PROBE}/spend`, {
      key: tenant.key,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"cost_micros": ',
    });
    expect(v1.status).toBe(400);
    requestIdOf(v1);
    expect(v1.body).toEqual(bad('Invalid JSON body at line 1, column 17: Expected a value, found the end of the input'));
    const adminRes = await call(server.baseUrl, 'POST', '/admin/v1/projects', {
      headers: { ...admin, 'content-type': 'application/json' },
      rawBody: '{name: acme}',
    });
    expect(adminRes.status).toBe(400);
    requestIdOf(adminRes);
    expect(adminRes.body).toEqual(bad("Invalid JSON body at line 1, column 2: Expected a property name in double quotes or '}', found 'name'"));
  });

  it('413 body over the configured limit (1 MB)', async () => {
    const res = await call(server.baseUrl, 'POST', '/admin/v1/projects', {
      headers: admin,
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(res.status).toBe(413);
    requestIdOf(res);
    expect(res.body).toEqual({
      error: { message: 'Request body is too large', type: 'invalid_request_error', code: 'request_too_large', param: null },
    });
  });

  it('204 CORS preflight with an empty body and the CORS headers, no key needed', async () => {
    const res = await call(server.baseUrl, 'OPTIONS', '/v1/chat/completions', {
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    requestIdOf(res);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key');
  });

  it('a bare OPTIONS (no preflight headers) is also an empty 204, never a non-envelope error', async () => {
    for (const headers of [{}, { origin: 'https://app.example.com' }] as Record<string, string>[]) {
      const res = await call(server.baseUrl, 'OPTIONS', '/v1/files', { headers });
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
      requestIdOf(res);
    }
  });

  it('exposes x-request-id to browsers on ordinary responses', async () => {
    const res = await call(server.baseUrl, 'GET', '/healthz', { headers: { origin: 'https://app.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-request-id');
    requestIdOf(res);
  });

  it('keeps the CORS headers on errors, so a browser script can read the envelope', async () => {
    const res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { headers: { origin: 'https://app.example.com' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { message: 'Missing authentication headers', type: 'authentication_error', code: 'missing_api_key', param: null },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('adds no CORS headers but Vary: Origin when the caller sends no Origin (SDKs, servers)', async () => {
    const res = await call(server.baseUrl, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toBe('Origin');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
  });

  it('429 rate limited', async () => {
    const tenant = await server.newTenant();
    let res: Response | undefined;
    for (let i = 0; i < 6; i++) res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: tenant.key });
    expect(res!.status).toBe(429);
    requestIdOf(res!);
  });

  it('500: a plain Error never leaks; it is logged with the request id', async () => {
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', `${PROBE}/boom`, { key: tenant.key });
    expect(res.status).toBe(500);
    const id = requestIdOf(res);
    expect(res.body).toEqual({
      error: { message: 'Internal server error', type: 'internal_error', code: 'internal_error', param: null },
    });
    const entry = logLines.find((line) => line.level === 50 && line.request_id === id);
    expect(entry?.err?.message).toBe('secret internal detail');
    expect(entry?.err?.stack).toContain('secret internal detail');
    // The request's own logger (made when first used) is bound to its id.
    expect(entry?.reqId).toBe(id);
  });

  it('one line per request, with its id, method, url, status and duration', async () => {
    const res = await call(server.baseUrl, 'GET', '/healthz');
    const id = requestIdOf(res);
    const lines = logLines.filter((line) => line.reqId === id);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'request completed', method: 'GET', url: '/healthz', status: 200, ms: expect.any(Number) }),
    ]);
  });

  it('500: an internal AppError keeps its code but never its message', async () => {
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', `${PROBE}/boom-app`, { key: tenant.key });
    expect(res.status).toBe(500);
    const id = requestIdOf(res);
    expect(res.body).toEqual({
      error: { message: 'Internal server error', type: 'internal_error', code: 'inference_error', param: null },
    });
    const entry = logLines.find((line) => line.level === 50 && line.request_id === id);
    expect(entry?.err?.message).toBe('db at 10.0.0.5 said: password expired');
  });

  it('request ids are unique', () => {
    expect(seenIds.length).toBeGreaterThanOrEqual(18);
    expect(new Set(seenIds).size).toBe(seenIds.length);
  });
});

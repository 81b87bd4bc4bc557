/** API-key authentication of /v1: missing, unknown, revoked, wrong project, Bearer, precedence, caching. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';

const MISSING = {
  error: { message: 'Missing authentication headers', type: 'authentication_error', code: 'missing_api_key', param: null },
};
const INVALID = {
  error: { message: 'Invalid credentials', type: 'authentication_error', code: 'invalid_api_key', param: null },
};
const WHOAMI = `${PROBE}/whoami`;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function revoke(server: TestServer, keyId: string): Promise<void> {
  const res = await call(server.baseUrl, 'POST', `/admin/v1/keys/${keyId}/revoke`, { headers: admin });
  expect(res.status).toBe(200);
  expect(res.body.active).toBe(false);
}

describe('API-key authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ extendApp: registerProbeRoutes });
  });
  afterAll(async () => server.close());

  it('accepts a valid x-api-key and resolves its project and key', async () => {
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', WHOAMI, { key: tenant.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'principal', projectId: tenant.projectId, keyId: tenant.keyId });
  });

  it('answers 401 "Missing authentication headers" without a key', async () => {
    const res = await call(server.baseUrl, 'GET', WHOAMI);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(MISSING);
  });

  it('treats an empty x-api-key as missing', async () => {
    const empty = await call(server.baseUrl, 'GET', WHOAMI, { headers: { 'x-api-key': '' } });
    expect(empty.status).toBe(401);
    expect(empty.body).toEqual(MISSING);
  });

  it('answers a non-Bearer Authorization with 401 saying what was expected, never echoing a bare key', async () => {
    const expected = 'expected "Authorization: Bearer <API key>" or "x-api-key: <API key>"';
    const basic = await call(server.baseUrl, 'GET', WHOAMI, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(401);
    expect(basic.body).toEqual({
      error: { message: `Unsupported Authorization header scheme "Basic": ${expected}`, type: 'authentication_error', code: 'invalid_authorization_header', param: null },
    });
    const bare = await call(server.baseUrl, 'GET', WHOAMI, { headers: { authorization: 'sk-sluice-0123456789abcdef' } });
    expect(bare.status).toBe(401);
    expect(bare.body.error.message).toBe(`Unsupported Authorization header: ${expected}`);
    expect(JSON.stringify(bare.body)).not.toContain('0123456789');
  });

  it('answers 403 "Invalid credentials" for an unknown key', async () => {
    for (const key of ['sk-sluice-not-a-real-key', 'garbage']) {
      const res = await call(server.baseUrl, 'GET', WHOAMI, { key });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(INVALID);
    }
  });

  it('answers 403 for a revoked key at once on the replica that revoked it', async () => {
    const tenant = await server.newTenant();
    expect((await call(server.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status).toBe(200); // now cached
    await revoke(server, tenant.keyId);
    const res = await call(server.baseUrl, 'GET', WHOAMI, { key: tenant.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID);
  });

  it('answers 403 when the key belongs to another project than x-project-id', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', WHOAMI, { key: a.key, headers: { 'x-project-id': b.projectId } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID);
    const unknown = await call(server.baseUrl, 'GET', WHOAMI, {
      key: a.key,
      headers: { 'x-project-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknown.status).toBe(403);
    expect(unknown.body).toEqual(INVALID);
  });

  it('accepts x-project-id naming the key’s own project, in any letter case', async () => {
    const a = await server.newTenant();
    for (const id of [a.projectId, a.projectId.toUpperCase()]) {
      const res = await call(server.baseUrl, 'GET', WHOAMI, { key: a.key, headers: { 'x-project-id': id } });
      expect(res.status).toBe(200);
      expect(res.body.projectId).toBe(a.projectId);
    }
  });

  it('answers 400 when x-project-id is not a UUID', async () => {
    const a = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', WHOAMI, { key: a.key, headers: { 'x-project-id': 'proj_123' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'x-project-id must be a UUID',
        type: 'invalid_request_error',
        code: 'invalid_project_id',
        param: 'x-project-id',
      },
    });
  });

  it('accepts Authorization: Bearer <key> (any scheme case)', async () => {
    const a = await server.newTenant();
    for (const scheme of ['Bearer', 'bearer']) {
      const res = await call(server.baseUrl, 'GET', WHOAMI, { headers: { authorization: `${scheme} ${a.key}` } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'principal', projectId: a.projectId, keyId: a.keyId });
    }
    const bad = await call(server.baseUrl, 'GET', WHOAMI, { headers: { authorization: 'Bearer sk-sluice-nope' } });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual(INVALID);
  });

  it('lets x-api-key win over Authorization: Bearer', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const valid = await call(server.baseUrl, 'GET', WHOAMI, { key: a.key, headers: { authorization: 'Bearer garbage' } });
    expect(valid.status).toBe(200);
    expect(valid.body.keyId).toBe(a.keyId);

    const garbage = await call(server.baseUrl, 'GET', WHOAMI, { key: 'garbage', headers: { authorization: `Bearer ${a.key}` } });
    expect(garbage.status).toBe(403);
    expect(garbage.body).toEqual(INVALID);

    const other = await call(server.baseUrl, 'GET', WHOAMI, { key: b.key, headers: { authorization: `Bearer ${a.key}` } });
    expect(other.status).toBe(200);
    expect(other.body.keyId).toBe(b.keyId);
  });

  it('does not accept the admin token as an API key', async () => {
    const res = await call(server.baseUrl, 'GET', WHOAMI, { headers: admin });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID);
  });

  it('guards the production /v1 routes that exist (401 without a key, 403 with a bad one)', async () => {
    const routes = ['/v1/models', '/v1/files', '/v1/batches'].filter((url) => server.app.hasRoute({ method: 'GET', url }));
    for (const url of routes) {
      const missing = await call(server.baseUrl, 'GET', url);
      expect(missing.status, url).toBe(401);
      expect(missing.body, url).toEqual(MISSING);
      const invalid = await call(server.baseUrl, 'GET', url, { key: 'sk-sluice-nope' });
      expect(invalid.status, url).toBe(403);
      expect(invalid.body, url).toEqual(INVALID);
    }
  });

  it('leaves /v1/openapi.json public', async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
  });
});

describe('revocation across replicas sharing one database', () => {
  const CACHE_TTL_MS = 60_000;
  let offsetMs = 0;
  const clock = { nowMs: () => Date.now() + offsetMs };
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    first = await startTestServer({ extendApp: registerProbeRoutes });
    second = await startTestServer({
      env: { DATA_DIR: first.dataDir, AUTH_CACHE_TTL_MS: String(CACHE_TTL_MS) },
      overrides: { clock },
      extendApp: registerProbeRoutes,
    });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('a key created on one replica works on the other', async () => {
    const tenant = await first.newTenant();
    const res = await call(second.baseUrl, 'GET', WHOAMI, { key: tenant.key });
    expect(res.status).toBe(200);
    expect(res.body.keyId).toBe(tenant.keyId);
  });

  it('without a revocation feed (SQLite) the other replica keeps its cached answer until it expires, then refuses the key', async (context) => {
    // On PostgreSQL the revocation is announced to the other replica (test/integration/scale/key-revocation.test.ts).
    if (second.core.database.flavor === 'postgres') context.skip();
    const tenant = await first.newTenant();
    expect((await call(second.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status).toBe(200);
    await revoke(first, tenant.keyId);
    expect((await call(first.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status).toBe(403);
    // The second replica's clock has not moved past the lookup's life (at most 1 s without a feed): it still stands.
    expect((await call(second.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status).toBe(200);
    offsetMs += 1_000;
    const res = await call(second.baseUrl, 'GET', WHOAMI, { key: tenant.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID);
  });

  it('with a short real TTL, revocation reaches the other replica within seconds', async () => {
    const third = await startTestServer({
      env: { DATA_DIR: first.dataDir, AUTH_CACHE_TTL_MS: '300' },
      extendApp: registerProbeRoutes,
    });
    try {
      const tenant = await first.newTenant();
      expect((await call(third.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status).toBe(200);
      await revoke(first, tenant.keyId);
      const deadline = Date.now() + 10_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await call(third.baseUrl, 'GET', WHOAMI, { key: tenant.key })).status;
      }
      expect(status).toBe(403);
    } finally {
      await third.close();
    }
  });
});

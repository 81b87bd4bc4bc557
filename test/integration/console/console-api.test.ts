/**
 * The console's server side without a browser: sign-in with the admin token and with an
 * API key, the cookie's flags, CSRF on state-changing requests, the sign-in limit, the
 * same /v1 and admin routes under /console/api with exactly the caller's view, a revoked
 * key ending its sessions, static assets' headers, and the usage report's aggregation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ yaml: 'console:\n  sign_in_attempts_per_minute: 50\n' });
});
afterAll(async () => server.close());

interface Browser {
  cookie: string;
  csrf: string;
  body: any;
  setCookie: string;
}

async function signIn(credential: string, headers: Record<string, string> = {}): Promise<Browser> {
  const res = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential }, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const setCookie = res.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, csrf: res.body.csrf_token, body: res.body, setCookie };
}

const as = (browser: Browser, extra: Record<string, string> = {}) => ({ cookie: browser.cookie, ...extra });

describe('sign-in', () => {
  it('an operator signs in with the admin token: HttpOnly, SameSite=Strict cookie holding a session id, not the token', async () => {
    const op = await signIn(ADMIN_TOKEN);
    expect(op.body).toEqual({
      object: 'console_session',
      role: 'operator',
      project_id: null,
      key_id: null,
      expires_at: expect.any(Number),
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      mcp_path: '/mcp',
    });
    expect(op.setCookie).toMatch(/^sluice_session=[A-Za-z0-9_-]{43}; /);
    expect(op.setCookie).toContain('HttpOnly');
    expect(op.setCookie).toContain('SameSite=Strict');
    expect(op.setCookie).toContain('Path=/console');
    expect(op.setCookie).not.toContain(ADMIN_TOKEN);
    expect(op.body.expires_at - Date.now() / 1000).toBeGreaterThan(11 * 3600);
    const again = await call(server.baseUrl, 'GET', '/console/api/session', { headers: as(op) });
    expect(again.body).toEqual(op.body);
  });

  it('a developer signs in with an API key and sees its own project only', async () => {
    const mine = await server.newTenant({ name: 'mine' });
    const other = await server.newTenant({ name: 'other' });
    const dev = await signIn(mine.key);
    expect(dev.body).toMatchObject({ role: 'developer', project_id: mine.projectId, key_id: mine.keyId });
    const project = await call(server.baseUrl, 'GET', '/console/api/v1/project', { headers: as(dev) });
    expect(project.body).toMatchObject({ id: mine.projectId, name: 'mine', object: 'project' });
    // Another project's id changes nothing: the session is its key's caller.
    const pinned = await call(server.baseUrl, 'GET', '/console/api/v1/project', { headers: as(dev, { 'x-project-id': other.projectId }) });
    expect(pinned.body.id).toBe(mine.projectId);
    const admin = await call(server.baseUrl, 'GET', '/console/api/admin/projects', { headers: as(dev) });
    expect(admin.status).toBe(403);
    expect(admin.body.error).toMatchObject({ code: 'operator_required' });
    // Another project's file is not found, as through the API.
    const upload = new FormData();
    upload.append('purpose', 'batch');
    upload.append('file', new Blob(['{}\n']), 'x.jsonl');
    const file = (await (await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': other.key }, body: upload })).json()) as { id: string };
    const seen = await call(server.baseUrl, 'GET', `/console/api/v1/files/${file.id}`, { headers: as(dev) });
    expect(seen.status).toBe(404);
  });

  it('refuses a wrong credential with 401 and a cross-site sign-in with 403', async () => {
    const wrong = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential: 'sk-sluice-nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ message: 'Invalid credentials', code: 'invalid_credentials' });
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const cross = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential: ADMIN_TOKEN }, headers: { origin: 'https://evil.example' } });
    expect(cross.status).toBe(403);
    expect(cross.body.error.code).toBe('cross_origin_sign_in');
  });

  it('limits sign-in attempts per client address', async () => {
    const limited = await startTestServer({ yaml: 'console:\n  sign_in_attempts_per_minute: 3\n' });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await call(limited.baseUrl, 'POST', '/console/api/session', { body: { credential: 'wrong' } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const res = await call(limited.baseUrl, 'POST', '/console/api/session', { body: { credential: ADMIN_TOKEN } });
      expect(res.status).toBe(429);
      expect(res.body.error).toMatchObject({ code: 'sign_in_rate_limited' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('CSRF and sign-out', () => {
  it('refuses a state-changing request without the session CSRF token, and accepts it with', async () => {
    const op = await signIn(ADMIN_TOKEN);
    const without = await call(server.baseUrl, 'POST', '/console/api/admin/projects', { body: { name: 'x' }, headers: as(op) });
    expect(without.status).toBe(403);
    expect(without.body.error).toMatchObject({ code: 'csrf_token_invalid' });
    const other = await signIn(ADMIN_TOKEN);
    const wrong = await call(server.baseUrl, 'POST', '/console/api/admin/projects', { body: { name: 'x' }, headers: as(op, { 'x-csrf-token': other.csrf }) });
    expect(wrong.status).toBe(403);
    const ok = await call(server.baseUrl, 'POST', '/console/api/admin/projects', { body: { name: 'x' }, headers: as(op, { 'x-csrf-token': op.csrf }) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'project', name: 'x' });
  });

  it('the decision route keeps the console’s CSRF refusal (403), though its own wire answers a bad key 401', async () => {
    const tenant = await server.newTenant({ name: 'decider' });
    const dev = await signIn(tenant.key);
    const body = { state: 'x', questions: { ok: { type: 'noul' } } };
    const without = await call(server.baseUrl, 'POST', '/console/api/v1/systemone', { body, headers: as(dev) });
    expect(without.status).toBe(403);
    expect(without.body.error).toMatchObject({ type: 'authentication_error', code: 'csrf_token_invalid' });
    const badKey = await call(server.baseUrl, 'POST', '/v1/systemone', { body, headers: { authorization: 'Bearer sk-nope' } });
    expect(badKey.status).toBe(401);
  });

  it('no session: 401 on every console API route', async () => {
    for (const path of ['/console/api/session', '/console/api/v1/files', '/console/api/admin/projects']) {
      const res = await call(server.baseUrl, 'GET', path);
      expect(res.status, path).toBe(401);
      expect(res.body.error.code).toBe('session_required');
    }
  });

  it('sign-out ends the session', async () => {
    const op = await signIn(ADMIN_TOKEN);
    expect((await call(server.baseUrl, 'DELETE', '/console/api/session', { headers: as(op) })).status).toBe(403);
    const out = await call(server.baseUrl, 'DELETE', '/console/api/session', { headers: as(op, { 'x-csrf-token': op.csrf }) });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^sluice_session=; /);
    expect((await call(server.baseUrl, 'GET', '/console/api/admin/projects', { headers: as(op) })).status).toBe(401);
  });

  it("revoking a key ends its developer sessions", async () => {
    const tenant = await server.newTenant();
    const dev = await signIn(tenant.key);
    expect((await call(server.baseUrl, 'GET', '/console/api/v1/files', { headers: as(dev) })).status).toBe(200);
    await server.core.projects.revokeKey(tenant.keyId);
    expect((await call(server.baseUrl, 'GET', '/console/api/v1/files', { headers: as(dev) })).status).toBe(401);
  });
});

describe('operator in a project', () => {
  it('needs x-project-id on the /v1 routes, and a project that exists', async () => {
    const op = await signIn(ADMIN_TOKEN);
    const none = await call(server.baseUrl, 'GET', '/console/api/v1/files', { headers: as(op) });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ code: 'project_required', param: 'x-project-id' });
    const missing = await call(server.baseUrl, 'GET', '/console/api/v1/files', { headers: as(op, { 'x-project-id': '00000000-0000-4000-8000-000000000000' }) });
    expect(missing.status).toBe(404);
    const tenant = await server.newTenant({ name: 'acted-in' });
    const project = await call(server.baseUrl, 'GET', '/console/api/v1/project', { headers: as(op, { 'x-project-id': tenant.projectId }) });
    expect(project.body).toMatchObject({ id: tenant.projectId, name: 'acted-in' });
  });
});

describe('credit grants', () => {
  it("records each grant's reason with the balance change; the operator and the project's developer both list them", async () => {
    const tenant = await server.newTenant({ name: 'granted' });
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const before = (await call(server.baseUrl, 'GET', `/admin/v1/projects/${tenant.projectId}`, { headers: admin })).body.balance_usd;
    const granted = await call(server.baseUrl, 'POST', `/admin/v1/projects/${tenant.projectId}/credits`, { headers: admin, body: { amount_usd: 2.5, reason: 'pilot' } });
    expect(granted.body.balance_usd).toBeCloseTo(before + 2.5, 6);
    await call(server.baseUrl, 'POST', `/admin/v1/projects/${tenant.projectId}/credits`, { headers: admin, body: { amount_usd: -0.5 } });
    const list = await call(server.baseUrl, 'GET', `/admin/v1/projects/${tenant.projectId}/credits`, { headers: admin });
    expect(list.body.data.slice(0, 2)).toEqual([
      { id: expect.stringMatching(/^grant_/), object: 'credit_grant', project_id: tenant.projectId, amount_usd: -0.5, reason: null, created_at: expect.any(Number) },
      { id: expect.stringMatching(/^grant_/), object: 'credit_grant', project_id: tenant.projectId, amount_usd: 2.5, reason: 'pilot', created_at: expect.any(Number) },
    ]);
    const dev = await signIn(tenant.key);
    const own = await call(server.baseUrl, 'GET', '/console/api/v1/project/credits', { headers: as(dev) });
    expect(own.body.data.slice(0, 2)).toEqual(list.body.data.slice(0, 2));
    const viaKey = await call(server.baseUrl, 'GET', '/v1/project/credits', { key: tenant.key });
    expect(viaKey.body).toEqual(own.body);
  });
});

describe('static files', () => {
  it('serves index.html uncached and hashed assets immutable, with the CSP; / redirects browsers', async () => {
    const index = await fetch(`${server.baseUrl}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${server.baseUrl}${asset}`, { headers: { 'accept-encoding': 'br' } });
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-encoding')).toBe('br');
    await js.arrayBuffer();
    const root = await fetch(`${server.baseUrl}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    await root.arrayBuffer();
    const api = await call(server.baseUrl, 'GET', '/', { headers: { accept: 'application/json' } });
    expect(api.status).toBe(404);
  });
});

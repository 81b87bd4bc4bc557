/** The admin API: token auth, every route's exact shape, keys shown once and stored hashed, credits, usage pages. */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY = /^sk-sluice-[A-Za-z0-9_-]{43}$/;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const nowSeconds = () => Math.floor(Date.now() / 1000);
/** A key object's policy fields when it sets none. */
const NO_POLICY = { models: null, budget: null, rpm: null, tpm: null, expires_at: null, metadata: null, tags: null, previous_key_valid_until: null };

function expectRecent(seconds: unknown): void {
  expect(Number.isInteger(seconds)).toBe(true);
  expect(Math.abs((seconds as number) - nowSeconds())).toBeLessThan(600);
}

describe('admin API', () => {
  let server: TestServer;
  const post = (url: string, body?: unknown) => call(server.baseUrl, 'POST', url, { headers: admin, body });
  const get = (url: string) => call(server.baseUrl, 'GET', url, { headers: admin });
  const newProject = async (name = 'acme') => (await post('/admin/v1/projects', { name })).body;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.close());

  describe('authentication', () => {
    it('401 without a bearer token', async () => {
      for (const headers of [{}, { authorization: ADMIN_TOKEN }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
        const res = await call(server.baseUrl, 'POST', '/admin/v1/projects', { headers, body: { name: 'x' } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({
          error: { message: 'Missing authentication headers', type: 'authentication_error', code: 'missing_admin_token', param: null },
        });
      }
    });

    it('403 with a wrong token (including an API key)', async () => {
      const tenant = await server.newTenant();
      for (const token of ['wrong', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1), tenant.key]) {
        const res = await call(server.baseUrl, 'GET', `/admin/v1/projects/${tenant.projectId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          error: { message: 'Invalid credentials', type: 'authentication_error', code: 'invalid_admin_token', param: null },
        });
      }
    });

    it('admin routes are absent (404) when SLUICE_ADMIN_TOKEN is unset', async () => {
      const disabled = await startTestServer({ env: { SLUICE_ADMIN_TOKEN: '' } });
      try {
        for (const auth of [{}, admin]) {
          const res = await call(disabled.baseUrl, 'POST', '/admin/v1/projects', { headers: auth, body: { name: 'x' } });
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('unknown_route');
        }
      } finally {
        await disabled.close();
      }
    });
  });

  describe('projects', () => {
    it('POST /projects creates a project with a UUID and the free credits', async () => {
      const res = await post('/admin/v1/projects', { name: 'acme' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['balance_usd', 'created_at', 'id', 'name', 'object']);
      expect(res.body).toMatchObject({ object: 'project', name: 'acme', balance_usd: 1 });
      expect(res.body.id).toMatch(UUID);
      expectRecent(res.body.created_at);
    });

    it('POST /projects validates the name', async () => {
      const missing = await post('/admin/v1/projects', {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({
        error: { message: 'name is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'name' },
      });
      const blank = await post('/admin/v1/projects', { name: '   ' });
      expect(blank.status).toBe(400);
      expect(blank.body.error).toMatchObject({ message: 'Project name is required', param: 'name' });
      const extra = await post('/admin/v1/projects', { name: 'a', owner: 'b' });
      expect(extra.status).toBe(400);
      expect(extra.body.error).toMatchObject({ message: 'Unrecognized request argument supplied: owner', param: 'owner' });
      const wrongType = await post('/admin/v1/projects', { name: 5 });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.error).toMatchObject({ type: 'invalid_request_error', param: 'name' });
    });

    it('GET /projects/{id} returns the project; unknown or malformed ids are 404', async () => {
      const created = await newProject('lookup');
      const res = await get(`/admin/v1/projects/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const missing = await get(`/admin/v1/projects/${id}`);
        expect(missing.status).toBe(404);
        expect(missing.body).toEqual({
          error: { message: `Project not found: ${id}`, type: 'invalid_request_error', code: 'project_not_found', param: null },
        });
      }
    });
  });

  describe('keys', () => {
    it('POST /projects/{id}/keys returns the key once; listings show only the prefix', async () => {
      const project = await newProject();
      const res = await post(`/admin/v1/projects/${project.id}/keys`, { name: 'ci' });
      expect(res.status).toBe(200);
      const { key, ...record } = res.body;
      expect(key).toMatch(KEY);
      expect(record).toEqual({
        id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
        object: 'api_key',
        project_id: project.id,
        name: 'ci',
        prefix: key.slice(0, 16),
        active: true,
        created_at: expect.any(Number),
        revoked_at: null,
        owner_user_id: null,
        ...NO_POLICY,
      });
      expectRecent(record.created_at);

      const list = await get(`/admin/v1/projects/${project.id}/keys`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ object: 'list', data: [{ ...record, last_used_at: null }] });
      const text = JSON.stringify(list.body);
      expect(text).not.toContain(key);
      expect(text).not.toContain(createHash('sha256').update(key).digest('hex'));
      expect(JSON.stringify((await get(`/admin/v1/projects/${project.id}`)).body)).not.toContain(key.slice(16));
    });

    it('a key without a body is named "default"; unknown projects are 404', async () => {
      const project = await newProject();
      const res = await call(server.baseUrl, 'POST', `/admin/v1/projects/${project.id}/keys`, { headers: admin });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('default');
      const missing = await post('/admin/v1/projects/00000000-0000-4000-8000-000000000000/keys', { name: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('project_not_found');
    });

    it('keys are stored as SHA-256 hex; the plaintext is nowhere in the database file', async () => {
      const project = await newProject();
      const { key, id } = (await post(`/admin/v1/projects/${project.id}/keys`, { name: 'secret' })).body;
      const row = await server.core.database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
      expect(row.prefix).toBe(key.slice(0, 16));
      const secretPart = key.slice(16);
      const dbFile = path.join(server.dataDir, 'sluice.db');
      for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`].filter((f) => existsSync(f))) {
        const bytes = readFileSync(file);
        expect(bytes.includes(Buffer.from(secretPart)), file).toBe(false);
      }
    });

    it('POST /keys/{id}/revoke marks the key inactive, keeping the first revocation time', async () => {
      const project = await newProject();
      const created = (await post(`/admin/v1/projects/${project.id}/keys`, { name: 'old' })).body;
      const res = await post(`/admin/v1/keys/${created.id}/revoke`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: created.id,
        object: 'api_key',
        project_id: project.id,
        name: 'old',
        prefix: created.prefix,
        active: false,
        created_at: created.created_at,
        revoked_at: expect.any(Number),
        owner_user_id: null,
        ...NO_POLICY,
      });
      expectRecent(res.body.revoked_at);
      expect(JSON.stringify(res.body)).not.toContain(created.key);
      const again = await post(`/admin/v1/keys/${created.id}/revoke`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      const missing = await post('/admin/v1/keys/key_nope/revoke');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({
        error: { message: 'API key not found: key_nope', type: 'invalid_request_error', code: 'key_not_found', param: null },
      });
    });
  });

  describe('credits', () => {
    it('POST /projects/{id}/credits adds and removes (negative) credits', async () => {
      const project = await newProject();
      const up = await post(`/admin/v1/projects/${project.id}/credits`, { amount_usd: 2.5 });
      expect(up.status).toBe(200);
      expect(up.body).toEqual({ ...project, balance_usd: 3.5 });
      const down = await post(`/admin/v1/projects/${project.id}/credits`, { amount_usd: -5.25 });
      expect(down.status).toBe(200);
      expect(down.body).toEqual({ ...project, balance_usd: -1.75 });
      const micro = await post(`/admin/v1/projects/${project.id}/credits`, { amount_usd: 0.000001 });
      expect(micro.body.balance_usd).toBe(-1.749999);
      expect((await get(`/admin/v1/projects/${project.id}`)).body.balance_usd).toBe(-1.749999);
    });

    it('rejects a missing, non-numeric or out-of-range amount and unknown projects', async () => {
      const project = await newProject();
      for (const body of [{}, { amount_usd: '5' }, { amount_usd: null }, { amount_usd: 1e300 }]) {
        const res = await post(`/admin/v1/projects/${project.id}/credits`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount_usd' });
      }
      expect((await get(`/admin/v1/projects/${project.id}`)).body.balance_usd).toBe(1);
      const missing = await post('/admin/v1/projects/00000000-0000-4000-8000-000000000000/credits', { amount_usd: 1 });
      expect(missing.status).toBe(404);
    });
  });
});

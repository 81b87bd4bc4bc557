/** A key reaches only its own project: principal, x-project-id, usage and debits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('project scoping', () => {
  let server: TestServer;
  let a: Awaited<ReturnType<TestServer['newTenant']>>;
  let b: Awaited<ReturnType<TestServer['newTenant']>>;

  beforeAll(async () => {
    server = await startTestServer({ extendApp: registerProbeRoutes });
    a = await server.newTenant({ balanceUsd: 1, name: 'a' });
    b = await server.newTenant({ balanceUsd: 1, name: 'b' });
  });
  afterAll(async () => server.close());

  const usageOf = async (projectId: string) =>
    (await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/usage`, { headers: admin })).body;
  const balanceOf = async (projectId: string) =>
    (await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}`, { headers: admin })).body.balance_usd;

  it('a key resolves to its own project only', async () => {
    const res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: a.key });
    expect(res.body).toEqual({ object: 'principal', projectId: a.projectId, keyId: a.keyId });
  });

  it('naming another project in x-project-id is refused, in both directions', async () => {
    for (const [key, projectId] of [
      [a.key, b.projectId],
      [b.key, a.projectId],
    ] as const) {
      const res = await call(server.baseUrl, 'POST', `${PROBE}/spend`, {
        key,
        headers: { 'x-project-id': projectId },
        body: { cost_micros: 1000 },
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toEqual({ message: 'Invalid credentials', type: 'authentication_error', code: 'invalid_api_key', param: null });
    }
    expect((await usageOf(a.projectId)).data).toEqual([]);
    expect((await usageOf(b.projectId)).data).toEqual([]);
    expect(await balanceOf(a.projectId)).toBe(1);
    expect(await balanceOf(b.projectId)).toBe(1);
  });

  it("a billable call is recorded and debited on the caller's project only", async () => {
    const res = await call(server.baseUrl, 'POST', `${PROBE}/spend`, {
      key: a.key,
      headers: { 'x-project-id': a.projectId },
      body: { cost_micros: 250_000 },
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');

    const usageA = await usageOf(a.projectId);
    expect(usageA.data).toHaveLength(1);
    expect(usageA.data[0]).toMatchObject({
      id: res.body.id,
      project_id: a.projectId,
      key_id: a.keyId,
      cost_usd: 0.25,
      request_id: requestId,
      status: 200,
    });
    expect((await usageOf(b.projectId)).data).toEqual([]);
    expect(await balanceOf(a.projectId)).toBe(0.75);
    expect(await balanceOf(b.projectId)).toBe(1);
  });

  it("revoking one project's key leaves the other project's keys working", async () => {
    const c = await server.newTenant({ name: 'c' });
    const revoke = await call(server.baseUrl, 'POST', `/admin/v1/keys/${c.keyId}/revoke`, { headers: admin });
    expect(revoke.status).toBe(200);
    expect((await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: c.key })).status).toBe(403);
    expect((await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key: a.key })).status).toBe(200);
  });

  it("another project's key cannot see, read or delete a file (404, as if absent)", async (ctx) => {
    if (!server.app.hasRoute({ method: 'POST', url: '/v1/files' })) return ctx.skip();
    const form = new FormData();
    form.append('purpose', 'batch');
    const line = { custom_id: '1', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } };
    form.append('file', new Blob([`${JSON.stringify(line)}\n`], { type: 'application/jsonl' }), 'input.jsonl');
    const upload = await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': a.key }, body: form });
    expect(upload.status).toBe(200);
    const fileId = ((await upload.json()) as { id: string }).id;

    expect((await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key: a.key })).status).toBe(200);
    const listA = await call(server.baseUrl, 'GET', '/v1/files', { key: a.key });
    expect(listA.body.data.map((f: any) => f.id)).toContain(fileId);

    const listB = await call(server.baseUrl, 'GET', '/v1/files', { key: b.key });
    expect(listB.status).toBe(200);
    expect(listB.body.data.map((f: any) => f.id)).not.toContain(fileId);
    const absent = await call(server.baseUrl, 'GET', '/v1/files/file-does-not-exist', { key: b.key });
    for (const [method, url] of [
      ['GET', `/v1/files/${fileId}`],
      ['GET', `/v1/files/${fileId}/content`],
      ['DELETE', `/v1/files/${fileId}`],
    ] as const) {
      const res = await call(server.baseUrl, method, url, { key: b.key });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error.type, `${method} ${url}`).toBe(absent.body.error.type);
      expect(res.body.error.code, `${method} ${url}`).toBe(absent.body.error.code);
    }
    expect((await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key: a.key })).status).toBe(200);
  });

  it('a second key of the same project shares its balance and usage', async () => {
    const second = await call(server.baseUrl, 'POST', `/admin/v1/projects/${b.projectId}/keys`, { headers: admin, body: { name: 'two' } });
    const res = await call(server.baseUrl, 'POST', `${PROBE}/spend`, { key: second.body.key, body: { cost_micros: 500_000 } });
    expect(res.status).toBe(200);
    const usage = await usageOf(b.projectId);
    expect(usage.data.map((u: any) => u.key_id)).toEqual([second.body.id]);
    expect(await balanceOf(b.projectId)).toBe(0.5);
  });
});

/** The admin usage listing: record shape, newest first, cursors, limits. */
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('admin API: GET /admin/v1/projects/{id}/usage', () => {
  let server: TestServer;
  const get = (url: string) => call(server.baseUrl, 'GET', url, { headers: admin });
  const newProject = async () =>
    (await call(server.baseUrl, 'POST', '/admin/v1/projects', { headers: admin, body: { name: 'usage' } })).body;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.close());

  async function seedUsage(projectId: string, keyId: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { billing } = server.core;
      const call = { model: 'gpt-oss-120b', route: 'chat.completions', requestId: `req_seed_${i}`, inputTokens: 0, maxOutputTokens: 0 };
      const record = billing.usageRecord(apiKeyPrincipal(projectId, keyId), call, { inputTokens: 1000 * (i + 1), outputTokens: 100, status: 200 });
      await billing.write(record);
      ids.push(record.id);
    }
    return ids;
  }

  it('GET /projects/{id}/usage lists records newest first with cursors', async () => {
    const tenant = await server.newTenant();
    const ids = await seedUsage(tenant.projectId, tenant.keyId, 5);
    const newestFirst = [...ids].reverse();
    const url = `/admin/v1/projects/${tenant.projectId}/usage`;

    const page1 = await get(`${url}?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ object: 'list', has_more: true, first_id: newestFirst[0], last_id: newestFirst[1] });
    expect(page1.body.data.map((u: any) => u.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.body.data[1]).toEqual({
      id: newestFirst[1],
      object: 'usage_record',
      project_id: tenant.projectId,
      key_id: tenant.keyId,
      payer: { kind: 'project', id: tenant.projectId },
      model: 'gpt-oss-120b',
      route: 'chat.completions',
      input_tokens: 4000,
      output_tokens: 100,
      cost_usd: 0.00066, // 4000 × 0.15 + 100 × 0.60 micro-dollars
      request_id: 'req_seed_3',
      status: 200,
      created_at: expect.any(Number),
    });

    const page2 = await get(`${url}?limit=2&after=${page1.body.last_id}`);
    expect(page2.body.data.map((u: any) => u.id)).toEqual(newestFirst.slice(2, 4));
    expect(page2.body.has_more).toBe(true);
    const page3 = await get(`${url}?limit=2&after=${page2.body.last_id}`);
    expect(page3.body).toEqual({
      object: 'list',
      data: [expect.objectContaining({ id: newestFirst[4] })],
      first_id: newestFirst[4],
      last_id: newestFirst[4],
      has_more: false,
    });
    const all = await get(url);
    expect(all.body.data.map((u: any) => u.id)).toEqual(newestFirst);
    expect(all.body.has_more).toBe(false);
  });

  it('an empty history is an empty list', async () => {
    const project = await newProject();
    const res = await get(`/admin/v1/projects/${project.id}/usage`);
    expect(res.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('defaults to 20 records and accepts limits 1 to 100', async () => {
    const tenant = await server.newTenant();
    await seedUsage(tenant.projectId, tenant.keyId, 21);
    const url = `/admin/v1/projects/${tenant.projectId}/usage`;
    const byDefault = await get(url);
    expect(byDefault.body.data).toHaveLength(20);
    expect(byDefault.body.has_more).toBe(true);
    expect((await get(`${url}?limit=1`)).body.data).toHaveLength(1);
    expect((await get(`${url}?limit=100`)).body.data).toHaveLength(21);
  });

  it('rejects limits outside 1..100 with 400', async () => {
    const project = await newProject();
    for (const limit of ['0', '101', '-1', '1.5', 'abc', '']) {
      const res = await get(`/admin/v1/projects/${project.id}/usage?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(res.body, limit).toEqual({
        error: {
          message: 'limit must be an integer between 1 and 100',
          type: 'invalid_request_error',
          code: 'invalid_limit',
          param: 'limit',
        },
      });
    }
  });

  it('unknown projects are 404', async () => {
    const res = await get('/admin/v1/projects/00000000-0000-4000-8000-000000000000/usage');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('project_not_found');
  });
});

/**
 * The admin API's users and project members (with the admin token), unknown roles
 * refused with the field named, and the audit log: written for every change and every
 * console sign-in, read with filters and a cursor, exported as NDJSON and CSV, with no
 * route that changes it and no secret in it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

let server: TestServer;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const adminCall = (method: string, path: string, body?: unknown) => call(server.baseUrl, method, `/admin/v1${path}`, { headers: admin, ...(body !== undefined && { body }) });

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('users', () => {
  it('creates, reads, changes, lists and deletes a user; a taken email is 409', async () => {
    const created = await adminCall('POST', '/users', { email: 'Ada@Example.com', name: 'Ada' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^user_/), object: 'user', email: 'ada@example.com', name: 'Ada', operator: false, oidc_issuer: null, created_at: expect.any(Number) });
    const taken = await adminCall('POST', '/users', { email: 'ada@example.com' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'user_exists', param: 'email' });
    const changed = await adminCall('PATCH', `/users/${created.body.id}`, { operator: true });
    expect(changed.body).toMatchObject({ id: created.body.id, operator: true, name: 'Ada' });
    const listed = await adminCall('GET', '/users?limit=100');
    expect(listed.body.data.map((u: { id: string }) => u.id)).toContain(created.body.id);
    const deleted = await adminCall('DELETE', `/users/${created.body.id}`);
    expect(deleted.body).toEqual({ id: created.body.id, object: 'user.deleted', deleted: true });
    const gone = await adminCall('GET', `/users/${created.body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('user_not_found');
  });

  it('refuses a bad email with the field named', async () => {
    const bad = await adminCall('POST', '/users', { email: 'not-an-email' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ message: 'email must be an email address', param: 'email', code: 'invalid_email' });
  });
});

describe('members', () => {
  it('adds a member, changes their role, lists and removes them; an unknown role is refused naming the field', async () => {
    const { projectId } = await server.newTenant();
    const user = (await adminCall('POST', '/users', { email: 'grace@example.com' })).body;
    const unknown = await adminCall('POST', `/projects/${projectId}/members`, { user_id: user.id, role: 'superuser' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ message: 'role must be one of viewer, member, admin, owner, got "superuser"', param: 'role', code: 'invalid_role' });
    const added = await adminCall('POST', `/projects/${projectId}/members`, { user_id: user.id, role: 'viewer' });
    expect(added.body).toEqual({ object: 'project_member', project_id: projectId, user_id: user.id, email: 'grace@example.com', name: null, role: 'viewer', granted_by: 'admin', created_at: expect.any(Number) });
    const again = await adminCall('POST', `/projects/${projectId}/members`, { user_id: user.id, role: 'admin' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('member_exists');
    const badChange = await adminCall('PATCH', `/projects/${projectId}/members/${user.id}`, { role: 'Admin' });
    expect(badChange.status).toBe(400);
    expect(badChange.body.error.param).toBe('role');
    const changed = await adminCall('PATCH', `/projects/${projectId}/members/${user.id}`, { role: 'admin' });
    expect(changed.body.role).toBe('admin');
    const list = await adminCall('GET', `/projects/${projectId}/members`);
    expect(list.body).toEqual({ object: 'list', data: [changed.body] });
    const removed = await adminCall('DELETE', `/projects/${projectId}/members/${user.id}`);
    expect(removed.body).toEqual({ id: user.id, object: 'project_member.deleted', deleted: true });
    const notMember = await adminCall('DELETE', `/projects/${projectId}/members/${user.id}`);
    expect(notMember.status).toBe(404);
    expect(notMember.body.error.code).toBe('member_not_found');
    const noUser = await adminCall('POST', `/projects/${projectId}/members`, { user_id: 'user_nobody', role: 'viewer' });
    expect(noUser.status).toBe(404);
    expect(noUser.body.error.code).toBe('user_not_found');
  });
});

describe('audit log', () => {
  it('records changes to projects, keys, credit and members with who, what and from where; filters and pages', async () => {
    const project = (await adminCall('POST', '/projects', { name: 'audited' })).body;
    const key = (await adminCall('POST', `/projects/${project.id}/keys`, { name: 'ci' })).body;
    await adminCall('POST', `/keys/${key.id}/revoke`);
    await adminCall('POST', `/projects/${project.id}/credits`, { amount_usd: 5, reason: 'pilot' });
    const user = (await adminCall('POST', '/users', { email: 'audit-me@example.com' })).body;
    await adminCall('POST', `/projects/${project.id}/members`, { user_id: user.id, role: 'member' });

    const log = await adminCall('GET', `/audit?project_id=${project.id}`);
    expect(log.status).toBe(200);
    expect(log.body.data.map((e: { action: string }) => e.action)).toEqual(['member.add', 'credit.grant', 'key.revoke', 'key.create', 'project.create']);
    const [member, credit, revoke, create] = log.body.data;
    expect(create).toEqual({
      id: expect.stringMatching(/^audit_/),
      object: 'audit_entry',
      created_at: expect.any(Number),
      actor: { type: 'admin_token', id: null, ip: '127.0.0.1' },
      action: 'key.create',
      target: { type: 'api_key', id: key.id },
      project_id: project.id,
      detail: { name: 'ci', prefix: key.prefix },
    });
    expect(JSON.stringify(log.body)).not.toContain(key.key);
    expect(revoke.target).toEqual({ type: 'api_key', id: key.id });
    expect(credit.detail).toEqual({ amount_usd: 5, reason: 'pilot', balance_usd: expect.any(Number) });
    expect(member).toMatchObject({ target: { type: 'user', id: user.id }, detail: { role: 'member' } });

    const page = await adminCall('GET', `/audit?project_id=${project.id}&limit=2`);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_more).toBe(true);
    const next = await adminCall('GET', `/audit?project_id=${project.id}&limit=2&after=${page.body.last_id}`);
    expect(next.body.data.map((e: { action: string }) => e.action)).toEqual(['key.revoke', 'key.create']);
    const creates = await adminCall('GET', '/audit?action=user.create&limit=100');
    expect(creates.body.data.some((e: { target: { id: string } }) => e.target.id === user.id)).toBe(true);
    const future = await adminCall('GET', `/audit?project_id=${project.id}&since=${Math.floor(Date.now() / 1000) + 3600}`);
    expect(future.body.data).toEqual([]);
    const badTime = await adminCall('GET', '/audit?since=yesterday');
    expect(badTime.status).toBe(400);
    expect(badTime.body.error).toMatchObject({ param: 'since', code: 'invalid_time' });
  });

  it('records console sign-ins, successful and failed, without the credential', async () => {
    const ok = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential: ADMIN_TOKEN } });
    expect(ok.status).toBe(200);
    const bad = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential: 'sk-sluice-wrong-secret' } });
    expect(bad.status).toBe(401);
    const failures = (await adminCall('GET', '/audit?action=sign_in.failure')).body.data;
    expect(failures[0]).toMatchObject({ actor: { type: 'anonymous', id: null, ip: '127.0.0.1' }, detail: { method: 'credential' } });
    const successes = (await adminCall('GET', '/audit?action=sign_in.success')).body.data;
    expect(successes[0]).toMatchObject({ actor: { type: 'operator_session', id: null }, detail: { method: 'admin_token' } });
    const everything = JSON.stringify((await adminCall('GET', '/audit?limit=100')).body);
    expect(everything).not.toContain(ADMIN_TOKEN);
    expect(everything).not.toContain('sk-sluice-wrong-secret');
  });

  it('exports as NDJSON and CSV, streamed; a bad format is refused', async () => {
    const project = (await adminCall('POST', '/projects', { name: '=cmd|evil' })).body;
    await adminCall('POST', `/projects/${project.id}/credits`, { amount_usd: 1, reason: 'a "quoted", reason' });
    const ndjson = await fetch(`${server.baseUrl}/admin/v1/audit/export?project_id=${project.id}`, { headers: admin });
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.action)).toEqual(['credit.grant', 'project.create']);
    const csv = await fetch(`${server.baseUrl}/admin/v1/audit/export?project_id=${project.id}&format=csv`, { headers: admin });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = (await csv.text()).split('\r\n');
    expect(rows[0]).toBe('id,created_at,actor_type,actor_id,ip,action,target_type,target_id,project_id,detail');
    expect(rows[1]).toContain(',credit.grant,project,');
    expect(rows[1]).toContain('"{""amount_usd"":1,""reason"":""a \\""quoted\\"", reason""');
    expect(rows[2]).toContain(`"{""name"":""=cmd|evil""}"`);
    expect(rows).toHaveLength(4);
    const bad = await adminCall('GET', '/audit/export?format=xml');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'format', code: 'invalid_format' });
  });

  it('has no route that changes an entry', async () => {
    const entry = (await adminCall('GET', '/audit?limit=1')).body.data[0];
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const res = await adminCall(method, `/audit/${entry.id}`, method === 'DELETE' ? undefined : {});
      expect(res.status).toBe(404);
    }
    expect((await adminCall('DELETE', '/audit')).status).toBe(404);
  });
});

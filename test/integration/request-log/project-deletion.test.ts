/**
 * Deleting a project (`DELETE /admin/v1/projects/:id`), on SQLite and PostgreSQL: its keys
 * stop authenticating, its request log is empty, its bodies' blob files are gone from the
 * disk, it is not found any more, its usage records stay, and the deletion is audited;
 * another project is untouched. While one of its batches runs the deletion is refused
 * with 409 in the admin envelope, and nothing changes.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { postgresSchema } from '../../helpers/databases.js';
import { uploadOk } from '../batches/support/batch-helpers.js';
import { admin, FAST_FLUSH_YAML, flushLog, setBodies } from './setup.js';

type Tenant = { projectId: string; key: string; keyId: string };

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
});

afterAll(async () => {
  await upstream?.close();
});

const DATABASES: Record<string, () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>> = {
  sqlite: async () => ({ env: {}, drop: async () => {} }),
  postgres: async () => {
    const schema = await postgresSchema();
    return { env: { DATABASE_URL: schema.url }, drop: schema.drop };
  },
};

describe.each(Object.keys(DATABASES))('on %s', (name) => {
  let server: TestServer;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await DATABASES[name]!();
    drop = database.drop;
    server = await startTestServer({
      env: database.env,
      yaml: `${FAST_FLUSH_YAML}  inline_body_bytes: 2048
models:
  llm:
    kind: chat
    price: { input_per_million_usd: 2, output_per_million_usd: 4 }
    base_url: ${upstream.baseUrl}
`,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  async function chat(key: string, content = 'hello'): Promise<{ status: number; id: string }> {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'llm', messages: [{ role: 'user', content }] } });
    return { status: res.status, id: res.headers.get('x-request-id')! };
  }

  async function loggedIds(projectId: string): Promise<string[]> {
    await flushLog(server);
    const res = await admin(server, 'GET', `/requests?project_id=${projectId}&limit=100`);
    expect(res.status).toBe(200);
    return res.body.data.map((r: any) => r.id);
  }

  /** A project logging full bodies, with one small call and one whose body goes to the blob store; its blob file's path. */
  async function projectWithLog(): Promise<{ tenant: Tenant; ids: string[]; blobFile: string }> {
    const tenant = await server.newTenant({ balanceUsd: 10 });
    await setBodies(server, tenant.projectId, 'full');
    const small = await chat(tenant.key);
    const large = await chat(tenant.key, 'x'.repeat(5000));
    expect([small.status, large.status]).toEqual([200, 200]);
    await vi.waitFor(async () => expect((await loggedIds(tenant.projectId)).sort()).toEqual([small.id, large.id].sort()));
    const blobFile = path.join(server.dataDir, 'blobs', 'request-log', tenant.projectId, `${large.id}.json`);
    expect(existsSync(blobFile)).toBe(true);
    return { tenant, ids: [small.id, large.id], blobFile };
  }

  it('revokes its keys, deletes its log and its bodies from the disk, keeps its usage, audits it, and leaves another project alone', async () => {
    const doomed = await projectWithLog();
    const other = await projectWithLog();

    const res = await admin(server, 'DELETE', `/projects/${doomed.tenant.projectId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: doomed.tenant.projectId,
      object: 'project.deleted',
      deleted: true,
      removed: { keys_revoked: 1, request_log_entries: 2, members: 0, console_sessions: 0, responses: 0, batches: 0, files_deleted: 0 },
      blobs_left: [],
    });

    const refused = await chat(doomed.tenant.key);
    expect(refused.status).toBe(403);
    expect(await loggedIds(doomed.tenant.projectId)).toEqual([]);
    for (const id of doomed.ids) expect((await admin(server, 'GET', `/requests/${id}`)).status).toBe(404);
    expect(existsSync(doomed.blobFile)).toBe(false);
    const { db } = server.core.database;
    expect(await db.selectFrom('request_log_bodies').select('id').where('project_id', '=', doomed.tenant.projectId).execute()).toEqual([]);
    // Usage records stay for accounting.
    expect(await db.selectFrom('usage_records').select('id').where('project_id', '=', doomed.tenant.projectId).execute()).toHaveLength(2);

    const gone = await admin(server, 'GET', `/projects/${doomed.tenant.projectId}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('project_not_found');
    expect((await admin(server, 'DELETE', `/projects/${doomed.tenant.projectId}`)).status).toBe(404);
    const listed = await admin(server, 'GET', '/projects?limit=100');
    expect(listed.body.data.map((p: any) => p.id)).not.toContain(doomed.tenant.projectId);

    const audit = await admin(server, 'GET', `/audit?action=project.delete&project_id=${doomed.tenant.projectId}`);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ action: 'project.delete', target: { type: 'project', id: doomed.tenant.projectId }, detail: { name: 'tenant', blobsLeft: [] } });

    expect((await loggedIds(other.tenant.projectId)).sort()).toEqual([...other.ids].sort());
    expect(existsSync(other.blobFile)).toBe(true);
    expect((await chat(other.tenant.key)).status).toBe(200);
  });

  it('refuses with 409 while one of its batches runs, and changes nothing', async () => {
    const tenant = await server.newTenant({ balanceUsd: 10 });
    const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'llm', messages: [{ role: 'user', content: 'hi' }] } });
    const fileId = await uploadOk(server.baseUrl, tenant.key, `${line}\n`);
    const batch = await call(server.baseUrl, 'POST', '/v1/batches', { key: tenant.key, body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(batch.status).toBe(200);

    const res = await admin(server, 'DELETE', `/projects/${tenant.projectId}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'project_has_running_batches',
      message: `Project ${tenant.projectId} has 1 running batch: cancel it (or wait for it to end) before deleting the project`,
    });
    expect((await admin(server, 'GET', `/projects/${tenant.projectId}`)).status).toBe(200);
    expect((await chat(tenant.key)).status).toBe(200);
  });
});

/** `sluice projects delete`: the same deletion as the admin route, on the server's database, audited as the command line's. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userInfo } from 'node:os';
import { runSluiceAsync } from '../../helpers/cli.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { admin, FAST_FLUSH_YAML, flushLog } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: `${FAST_FLUSH_YAML}models:\n  llm:\n    kind: chat\n    base_url: ${upstream.baseUrl}\n` });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('sluice projects delete', { timeout: 120_000 }, () => {
  it("deletes the project's log and revokes its keys, prints what it removed, and audits it as actor cli", async () => {
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'llm', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).toBe(200);
    await vi.waitFor(async () => {
      await flushLog(server);
      expect((await admin(server, 'GET', `/requests?project_id=${tenant.projectId}`)).body.data).toHaveLength(1);
    });
    const env = { ...server.dataEnv };
    const result = await runSluiceAsync(['projects', 'delete', tenant.projectId], { cwd: server.dataDir, env });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: tenant.projectId, object: 'project.deleted', deleted: true, removed: { keys_revoked: 1, request_log_entries: 1 }, blobs_left: [] });

    expect((await admin(server, 'GET', `/requests?project_id=${tenant.projectId}`)).body.data).toEqual([]);
    expect((await admin(server, 'GET', `/projects/${tenant.projectId}`)).status).toBe(404);
    const key = await server.core.database.db.selectFrom('api_keys').select('revoked_at').where('id', '=', tenant.keyId).executeTakeFirstOrThrow();
    expect(key.revoked_at).not.toBeNull();
    const audit = await admin(server, 'GET', `/audit?action=project.delete&project_id=${tenant.projectId}`);
    expect(audit.body.data.map((e: any) => e.actor)).toEqual([{ type: 'cli', id: userInfo().username, ip: 'local' }]);

    const again = await runSluiceAsync(['projects', 'delete', tenant.projectId], { cwd: server.dataDir, env });
    expect(again.status).toBe(1);
    expect(again.stderr).toBe(`error: Project not found: ${tenant.projectId}\n`);
  });
});

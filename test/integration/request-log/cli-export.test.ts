/** `sluice requests export`: the same NDJSON as the admin export, from the command line, on the server's database. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSluiceAsync } from '../../helpers/cli.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { FAST_FLUSH_YAML, flushLog } from './setup.js';

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

describe('sluice requests export', { timeout: 120_000 }, () => {
  it("prints one project's calls, newest first, one detail record per line; a bad filter is refused", async () => {
    const [a, b] = [await server.newTenant(), await server.newTenant()];
    const ids: string[] = [];
    for (const tenant of [a, b, a]) {
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'llm', messages: [{ role: 'user', content: 'Hi' }] } });
      ids.push(res.headers.get('x-request-id')!);
    }
    await vi.waitFor(async () => {
      await flushLog(server);
      expect((await call(server.baseUrl, 'GET', '/v1/requests', { key: a.key })).body.data).toHaveLength(2);
    });
    const env = { ...server.dataEnv };
    const result = await runSluiceAsync(['requests', 'export', '--project-id', a.projectId], { cwd: server.dataDir, env });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((l) => l.id)).toEqual([ids[2], ids[0]]);
    expect(lines[0]).toMatchObject({ object: 'request', project_id: a.projectId, model_requested: 'llm', deployment: 'llm' });
    expect(lines[0].attempts.map((x: any) => [x.deployment, x.status])).toEqual([['llm', 200]]);

    const bad = await runSluiceAsync(['requests', 'export', '--since', 'yesterday'], { cwd: server.dataDir, env });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe('error: since must be a time in unix seconds (a non-negative integer)\n');
  });
});

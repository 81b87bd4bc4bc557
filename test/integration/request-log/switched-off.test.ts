/**
 * `request_log.enabled: false`: calls are served as ever, and nothing is logged, whatever
 * the project says of bodies (its setting is kept for when the log is on again).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { FAST_FLUSH_YAML, flushLog, setBodies } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: `${FAST_FLUSH_YAML}  enabled: false\nmodels:\n  llm:\n    kind: chat\n    base_url: ${upstream.baseUrl}\n` });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

it('serves the call, logs nothing and keeps no body, with the project set to full', async () => {
  const tenant = await server.newTenant({ balanceUsd: 10 });
  await setBodies(server, tenant.projectId, 'full');
  const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'llm', messages: [{ role: 'user', content: 'hi' }] } });
  expect(res.status).toBe(200);
  await flushLog(server);
  expect(server.features.requestLog.services.writer.gap()).toEqual({ dropped: 0, lastDropAtMs: null, queued: 0 });
  const list = await call(server.baseUrl, 'GET', '/v1/requests', { key: tenant.key });
  expect(list.status).toBe(200);
  expect(list.body.data).toEqual([]);
  expect(await server.core.database.db.selectFrom('request_log').selectAll().execute()).toEqual([]);
  expect(await server.core.database.db.selectFrom('request_log_bodies').selectAll().execute()).toEqual([]);
});

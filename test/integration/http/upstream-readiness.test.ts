/**
 * Readiness that tells the truth about upstreams: each is probed with GET {base_url}/models
 * (only when readiness is asked, never on a call), an engine that refuses connections is
 * "unreachable since …" in /readyz, GET /v1/models/{id} and `sluice models list`, and a
 * call still tries it: once the engine is back, the next call is answered.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { tempDir } from '../../helpers/databases.js';
import { runSluice } from '../../helpers/cli.js';
import { vacantPort } from '../../helpers/refused-port.js';

const SINCE = /^unreachable since (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) \(ECONNREFUSED\)$/;

describe('an upstream that refuses connections', () => {
  let live: FakeUpstream;
  let revived: FakeUpstream | null = null;
  let server: TestServer;
  let key: string;
  let deadPort: number;
  const started = Date.now();

  beforeAll(async () => {
    live = await startFakeUpstream();
    deadPort = await vacantPort();
    const yaml = `models:\n  up-model:\n    base_url: ${live.baseUrl}\n  down-model:\n    base_url: http://127.0.0.1:${deadPort}/v1\n`;
    server = await startTestServer({ yaml });
    ({ key } = await server.newTenant());
  });
  afterAll(async () => {
    await server.close();
    await live.close();
    await revived?.close();
  });

  it('no inference call probes: a chat call sends the upstream only the chat request', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'up-model', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(200);
    expect(live.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /chat/completions']);
  });

  it('/readyz stays ready and names each upstream model: reachable, or unreachable since when', async () => {
    const res = await call(server.baseUrl, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ready');
    expect(res.body.upstreams['up-model']).toBe('reachable');
    const [, since] = SINCE.exec(res.body.upstreams['down-model'])!;
    expect(Date.parse(since!)).toBeGreaterThanOrEqual(started - 1000);
    expect(JSON.stringify(res.body)).not.toContain(String(deadPort));
    expect(live.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual(['/models']);
  });

  it('GET /v1/models/{id} carries unreachable_since for the down model only', async () => {
    const readyz = await call(server.baseUrl, 'GET', '/readyz');
    const since = SINCE.exec(readyz.body.upstreams['down-model'])![1];
    const down = await call(server.baseUrl, 'GET', '/v1/models/down-model', { key });
    expect(down.body).toEqual({ id: 'down-model', object: 'model', created: expect.any(Number), owned_by: 'sluice', unreachable_since: since });
    const up = await call(server.baseUrl, 'GET', '/v1/models/up-model', { key });
    expect(up.body).not.toHaveProperty('unreachable_since');
  });

  it('a call still tries the unreachable upstream: refused now (502), answered once the engine is back', async () => {
    const body = { model: 'down-model', messages: [{ role: 'user', content: 'hi' }] };
    const refused = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body });
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe('upstream_error');
    revived = await startFakeUpstream({ port: deadPort });
    const answered = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body });
    expect(answered.status).toBe(200);
    expect(answered.body.choices[0].message.content).toBe('Hello from the fake upstream.');
  });
});

describe('sluice models list', () => {
  it('probes the upstreams first: an unreachable one is not ready, with since when and why', async () => {
    const port = await vacantPort();
    const dir = tempDir('sluice-probe-');
    const file = path.join(dir, 'sluice.yaml');
    writeFileSync(file, `models:\n  down-model:\n    base_url: http://127.0.0.1:${port}/v1\n`);
    const result = runSluice(['models', 'list', '--json'], { cwd: dir, env: { DATA_DIR: dir, SLUICE_CONFIG: file } });
    expect(result.status).toBe(0);
    const row = (JSON.parse(result.stdout) as Array<Record<string, unknown>>).find((r) => r.id === 'down-model');
    expect(row).toMatchObject({ id: 'down-model', task: 'chat', backend: 'openai', ready: false });
    expect(row!.detail).toMatch(
      new RegExp(`^upstream http://127\\.0\\.0\\.1:${port}/v1 unreachable since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(ECONNREFUSED\\)$`),
    );
  }, 120_000);
});

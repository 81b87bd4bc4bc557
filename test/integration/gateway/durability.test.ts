/**
 * Settlement survives a crash: a spawned server answers a gateway call, is killed with
 * SIGKILL before its usage report could be delivered (the intermediary is answering 503),
 * and a new server on the same database delivers it after restart, accepted exactly once.
 * And the replay store is shared: two replicas on one Redis serve a signed request once.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnProcess, type ClusterProcess } from '../../helpers/cluster.js';
import { tempDir } from '../../helpers/databases.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { inferenceYaml } from '../inference/setup.js';
import { gatewayEnvVars, signedCall } from './setup.js';

let upstream: FakeUpstream;
let intermediary: FakeIntermediary;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  intermediary = await startFakeIntermediary();
});
afterAll(async () => {
  await intermediary.close();
  await upstream.close();
});

const CHAT = '/gateway/v1/chat/completions';
const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] };

describe('settlement outbox across kill -9', () => {
  const processes: ClusterProcess[] = [];
  afterAll(() => {
    for (const p of processes) p.child.kill('SIGKILL');
  });

  it('a report owed when the server died is delivered once by the restarted server', async () => {
    const dataDir = tempDir('sluice-gw-kill-');
    const configFile = path.join(dataDir, 'sluice.yaml');
    writeFileSync(configFile, inferenceYaml(upstream.baseUrl));
    const env = { DATA_DIR: dataDir, SLUICE_CONFIG: configFile, ...gatewayEnvVars(intermediary.baseUrl) };

    intermediary.refuseReports(503);
    const first = await spawnProcess('replica', env);
    processes.push(first);
    upstream.chat({ usage: { prompt_tokens: 31, completion_tokens: 4 } });
    const answer = await signedCall(first.baseUrl!, CHAT, body, { requestId: 'gwreq_kill' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('gw-usage')).toBe('input_tokens=31, output_tokens=4');
    // The settler has tried and been refused: the report is owed, not delivered.
    for (let i = 0; i < 100 && intermediary.reports.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(intermediary.reports.length).toBeGreaterThan(0);
    // Killed once the refusal is recorded (the entry is pending again, due within 0.5–1 s),
    // not mid-exchange: an entry leased by a dead process waits out its lease (60 s) first.
    await new Promise((r) => setTimeout(r, 150));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(intermediary.accepted.size).toBe(0);

    intermediary.refuseReports(null);
    const reportsBefore = intermediary.reports.length;
    const second = await spawnProcess('replica', env);
    processes.push(second);
    await intermediary.waitForAccepted(2);
    await new Promise((r) => setTimeout(r, 1_500));
    expect([...intermediary.accepted.values()].map((e) => [e.idempotencyKey, e.quantity])).toEqual([
      ['gwreq_kill:input_tokens', 31],
      ['gwreq_kill:output_tokens', 4],
    ]);
    // Delivered once: one report after the restart, carrying both meters, none sent again.
    const afterRestart = intermediary.reports.slice(reportsBefore);
    expect(afterRestart).toHaveLength(1);
    expect(afterRestart[0]!.events.map((e) => e.idempotencyKey).sort()).toEqual(['gwreq_kill:input_tokens', 'gwreq_kill:output_tokens']);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 90_000);
});

const withRedis = await redisReachable();

describe.skipIf(!withRedis)('replay across replicas sharing Redis', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const env = { ...gatewayEnvVars(intermediary.baseUrl), REDIS_URL };
    a = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), env });
    b = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('a request served by one replica is refused as a replay by the other', async () => {
    const requestId = `gwreq_redis_${Date.now()}`;
    const first = await signedCall(a.baseUrl, '/gateway/v1/embeddings', { model: 'all-minilm-l6-v2', input: 'x' }, { requestId });
    expect(first.status).toBe(200);
    const again = await signedCall(b.baseUrl, '/gateway/v1/embeddings', { model: 'all-minilm-l6-v2', input: 'x' }, { requestId, signature: first.signature });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'invalid_gateway_signature' });
  });
});

/**
 * Two replicas on one Redis (SLUICE_TEST_REDIS_URL; skipped when none answers): a
 * deployment one replica cooled down gets nothing from the other for the cooldown.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const reachable = await redisReachable();

describe.skipIf(!reachable)('routing state shared through Redis', () => {
  let failing: EngineProcess;
  let healthy: EngineProcess;
  let replicaA: TestServer;
  let replicaB: TestServer;

  beforeAll(async () => {
    [failing, healthy] = await Promise.all([startEngineProcess('fail-503'), startEngineProcess('healthy')]);
    const yaml = `routing:
  cooldown: { failures: 2, window_seconds: 60, seconds: 30 }
  redis_prefix: sluice-test:${randomUUID()}
models:
  shared-llm:
    kind: chat
    deployments:
      - { id: shared-503, base_url: ${failing.baseUrl} }
      - { id: shared-ok, base_url: ${healthy.baseUrl} }
`;
    const env = { REDIS_URL, RATE_LIMIT_RPM: '1000000' };
    [replicaA, replicaB] = await Promise.all([startTestServer({ yaml, env }), startTestServer({ yaml, env })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
    await Promise.all([failing?.kill(), healthy?.kill()]);
  });

  const stateOf = async (replica: TestServer, key: string) => {
    const res = await call(replica.baseUrl, 'GET', '/v1/models/shared-llm', { key });
    return (res.body.deployments as { id: string; state: string }[]).find((d) => d.id === 'shared-503')!.state;
  };

  it('after replica A cools a deployment down, replica B sends it nothing', async () => {
    const a = await replicaA.newTenant();
    const b = await replicaB.newTenant();
    const chat = (replica: TestServer, key: string) =>
      call(replica.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'shared-llm', messages: [{ role: 'user', content: 'Hello' }] } });

    // Round robin over two deployments: four calls send two to the failing one, which cools it down.
    for (let i = 0; i < 4; i++) expect((await chat(replicaA, a.key)).status).toBe(200);
    expect((await failing.counts())['/chat/completions']).toBe(2);
    expect(await stateOf(replicaA, a.key)).toBe('cooling_down');

    const cooledAt = Date.now();
    while ((await stateOf(replicaB, b.key)) !== 'cooling_down') {
      expect(Date.now() - cooledAt).toBeLessThan(1_500);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (let i = 0; i < 40; i++) expect((await chat(replicaB, b.key)).status).toBe(200);
    expect((await failing.counts())['/chat/completions']).toBe(2);
  }, 30_000);
});

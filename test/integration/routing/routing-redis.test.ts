/**
 * Two replicas on one Redis (SLUICE_TEST_REDIS_URL; skipped when none answers), against
 * fake engines in their own processes:
 * - a deployment replica A cooled down gets nothing from replica B for the whole of the
 *   (short, configured) cooldown, then exactly one call probes it back in, and the failed
 *   probe's new cooldown reaches A in turn;
 * - `least_busy` reads the calls in flight on every replica: while A holds calls on a slow
 *   engine, both A and B send theirs to the idle one.
 * `max_concurrency` is per replica (docs/models.md), so it is not shared here.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const reachable = await redisReachable();
const env = { REDIS_URL, RATE_LIMIT_RPM: '1000000' };
const hello = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hello' }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface WireDeployment {
  id: string;
  state: string;
  until: string | null;
}

describe.skipIf(!reachable)('cooldowns shared through Redis', () => {
  const COOLDOWN_SECONDS = 3;
  let failing: EngineProcess;
  let healthy: EngineProcess;
  let replicaA: TestServer;
  let replicaB: TestServer;

  beforeAll(async () => {
    [failing, healthy] = await Promise.all([startEngineProcess('fail-503'), startEngineProcess('healthy')]);
    const yaml = `routing:
  cooldown: { failures: 2, window_seconds: 60, seconds: ${COOLDOWN_SECONDS} }
  redis_prefix: sluice-test:${randomUUID()}
models:
  shared-llm:
    kind: chat
    deployments:
      - { id: shared-503, base_url: ${failing.baseUrl} }
      - { id: shared-ok, base_url: ${healthy.baseUrl} }
`;
    [replicaA, replicaB] = await Promise.all([startTestServer({ yaml, env }), startTestServer({ yaml, env })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
    await Promise.all([failing?.kill(), healthy?.kill()]);
  });

  const stateOf = async (replica: TestServer, key: string): Promise<WireDeployment> => {
    const res = await call(replica.baseUrl, 'GET', '/v1/models/shared-llm', { key });
    return (res.body.deployments as WireDeployment[]).find((d) => d.id === 'shared-503')!;
  };
  const sentToFailing = async () => (await failing.counts())['/chat/completions'] ?? 0;

  it('after replica A cools a deployment down, replica B sends it nothing for the whole period, then probes it back in once', async () => {
    const a = await replicaA.newTenant();
    const b = await replicaB.newTenant();
    const chat = (replica: TestServer, key: string) => call(replica.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello('shared-llm') });

    // Round robin over two deployments: four calls send two to the failing one, which cools it down.
    for (let i = 0; i < 4; i++) expect((await chat(replicaA, a.key)).status).toBe(200);
    expect(await sentToFailing()).toBe(2);
    const onA = await stateOf(replicaA, a.key);
    expect(onA.state).toBe('cooling_down');

    // Replicas agree within a second: B reads the cooldown, to the same millisecond, from Redis.
    const cooledAt = Date.now();
    let onB = await stateOf(replicaB, b.key);
    while (onB.state !== 'cooling_down') {
      expect(Date.now() - cooledAt).toBeLessThan(1_500);
      await sleep(50);
      onB = await stateOf(replicaB, b.key);
    }
    expect(onB.until).toBe(onA.until);
    const untilMs = Date.parse(onB.until!);

    // The whole period: every call B makes while it lasts is served, and none reaches the failing engine.
    let during = 0;
    while (Date.now() < untilMs - 50) {
      expect((await chat(replicaB, b.key)).status).toBe(200);
      during++;
    }
    expect(during).toBeGreaterThan(0);
    expect(await sentToFailing()).toBe(2);

    // After it, one call probes the deployment back in; failing, it is out again at once (no second probe).
    while (Date.now() <= untilMs) await sleep(20);
    let after = 0;
    while ((await sentToFailing()) < 3 && after < 10) {
      expect((await chat(replicaB, b.key)).status).toBe(200);
      after++;
    }
    expect(await sentToFailing()).toBe(3);
    const again = await stateOf(replicaB, b.key);
    expect(again.state).toBe('cooling_down');
    const againMs = Date.parse(again.until!);
    expect(againMs).toBeGreaterThan(untilMs);
    for (let i = 0; i < 5 && Date.now() < againMs - 50; i++) expect((await chat(replicaB, b.key)).status).toBe(200);
    expect(await sentToFailing()).toBe(3);

    // B's new cooldown reaches A through Redis.
    const probedAt = Date.now();
    while ((await stateOf(replicaA, a.key)).until !== again.until) {
      expect(Date.now() - probedAt).toBeLessThan(1_500);
      await sleep(50);
    }
  }, 60_000);
});

describe.skipIf(!reachable)('calls in flight shared through Redis (least_busy)', () => {
  /** Long enough that A's calls on the slow engine are still in flight while both replicas make theirs. */
  const SLOW_MS = 8_000;
  let slow: EngineProcess;
  let fast: EngineProcess;
  let replicaA: TestServer;
  let replicaB: TestServer;

  beforeAll(async () => {
    [slow, fast] = await Promise.all([startEngineProcess(`slow:${SLOW_MS}`), startEngineProcess('healthy')]);
    const yaml = `routing:
  strategy: least_busy
  redis_prefix: sluice-test:${randomUUID()}
models:
  busy-llm:
    kind: chat
    deployments:
      - { id: lb-slow, base_url: ${slow.baseUrl}, upstream_model: lb-slow }
      - { id: lb-fast, base_url: ${fast.baseUrl}, upstream_model: lb-fast }
`;
    [replicaA, replicaB] = await Promise.all([startTestServer({ yaml, env }), startTestServer({ yaml, env })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
    await Promise.all([slow?.kill(), fast?.kill()]);
  });

  /** Calls in flight per deployment as `replica` counts them: its own plus, from Redis, the other's. */
  const inFlightSeenBy = async (replica: TestServer) => {
    const model = replica.core.registry.find('busy-llm')!;
    const backend = await replica.core.registry.backendFor(model, 'chat');
    return Object.fromEntries(backend.deployments!(model).map((d) => [d.id, d.inFlight]));
  };

  it('sends both replicas\u2019 calls to the idle engine while one replica holds calls on the busy one', async () => {
    const a = await replicaA.newTenant();
    const b = await replicaB.newTenant();
    const chat = (replica: TestServer, key: string) => call(replica.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello('busy-llm') });

    // Ten calls at once on A: some land on the slow engine and stay there.
    const held = Array.from({ length: 10 }, () => chat(replicaA, a.key));
    const heldSettled = Promise.allSettled(held);
    // Every one of them reached an engine (the fast ones already answered).
    let onSlow = 0;
    while (onSlow + ((await fast.models())['lb-fast'] ?? 0) < 10) {
      await sleep(20);
      onSlow = (await slow.models())['lb-slow'] ?? 0;
    }
    expect(onSlow).toBeGreaterThan(0);
    // Once A's fast calls are done, B sees only A's calls on the slow engine.
    const seen = Date.now();
    let view = await inFlightSeenBy(replicaB);
    while (view['lb-slow'] !== onSlow || view['lb-fast'] !== 0) {
      expect(Date.now() - seen).toBeLessThan(2_000);
      await sleep(50);
      view = await inFlightSeenBy(replicaB);
    }

    // Without the shared counts both deployments would look idle to B, which would split its calls between them.
    const fastBefore = (await fast.models())['lb-fast'] ?? 0;
    for (let i = 0; i < 10; i++) expect((await chat(replicaB, b.key)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await chat(replicaA, a.key)).status).toBe(200);
    expect((await fast.models())['lb-fast'] ?? 0).toBe(fastBefore + 15);
    expect((await slow.models())['lb-slow']).toBe(onSlow);
    // The held calls were still in flight throughout (had they ended, the test would prove nothing).
    expect((await inFlightSeenBy(replicaA))['lb-slow']).toBe(onSlow);

    const statuses = (await heldSettled).map((r) => (r.status === 'fulfilled' ? r.value.status : 0));
    expect(statuses).toEqual(Array.from({ length: 10 }, () => 200));
  }, 60_000);
});

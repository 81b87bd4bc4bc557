/**
 * Two replicas on one Redis (skipped when none answers), against fake engines in their
 * own processes:
 * - a replica started after another cooled a deployment sends none of its first calls
 *   there (it reads the shared state before its first call of the model);
 * - session affinity: a session's turns stay on one engine whichever replica serves them,
 *   a session one replica moved (its engine cooled down) is followed by the other, and a
 *   replica started later learns the pins from Redis.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const reachable = await redisReachable();
const env = { REDIS_URL, RATE_LIMIT_RPM: '1000000' };
const hello = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hello' }] });

describe.skipIf(!reachable)('a replica reads the shared cooldowns before its first call', () => {
  let failing: EngineProcess;
  let healthy: EngineProcess;
  let replicaA: TestServer;
  let replicaB: TestServer | undefined;

  beforeAll(async () => {
    [failing, healthy] = await Promise.all([startEngineProcess('fail-503'), startEngineProcess('healthy')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
    await Promise.all([failing?.kill(), healthy?.kill()]);
  });

  it('0 of replica B’s first 10 calls reach the deployment replica A cooled just before B started', async () => {
    const yaml = `routing:
  cooldown: { failures: 2, window_seconds: 60, seconds: 30 }
  redis_prefix: sluice-test:${randomUUID()}
models:
  first-llm:
    kind: chat
    deployments:
      - { id: first-503, base_url: ${failing.baseUrl} }
      - { id: first-ok, base_url: ${healthy.baseUrl} }
`;
    replicaA = await startTestServer({ yaml, env });
    const a = await replicaA.newTenant();
    for (let i = 0; i < 4; i++) expect((await call(replicaA.baseUrl, 'POST', '/v1/chat/completions', { key: a.key, body: hello('first-llm') })).status).toBe(200);
    expect((await failing.counts())['/chat/completions']).toBe(2);

    replicaB = await startTestServer({ yaml, env });
    const b = await replicaB.newTenant();
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => call(replicaB!.baseUrl, 'POST', '/v1/chat/completions', { key: b.key, body: hello('first-llm') }).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(10).fill(200));
    expect((await failing.counts())['/chat/completions']).toBe(2);
  }, 60_000);
});

describe.skipIf(!reachable)('session affinity across replicas', () => {
  let engines: EngineProcess[];
  let replicaA: TestServer;
  let replicaB: TestServer;
  let clientA: OpenAI;
  let clientB: OpenAI;
  let replicaYaml: string;

  beforeAll(async () => {
    engines = await Promise.all([startEngineProcess('healthy'), startEngineProcess('healthy'), startEngineProcess('healthy')]);
    const yaml = `routing:
  retries: 2
  cooldown: { failures: 1, window_seconds: 60, seconds: 60 }
  redis_prefix: sluice-test:${randomUUID()}
  affinity: { key: prompt_cache_key }
models:
  warm-llm:
    kind: chat
    deployments:
${engines.map((e, i) => `      - { id: warm-${i}, base_url: ${e.baseUrl} }`).join('\n')}
`;
    replicaYaml = yaml;
    [replicaA, replicaB] = await Promise.all([startTestServer({ yaml, env }), startTestServer({ yaml, env })]);
    const [a, b] = await Promise.all([replicaA.newTenant(), replicaB.newTenant()]);
    clientA = new OpenAI({ baseURL: `${replicaA.baseUrl}/v1`, apiKey: a.key, maxRetries: 0 });
    clientB = new OpenAI({ baseURL: `${replicaB.baseUrl}/v1`, apiKey: b.key, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
    await Promise.all((engines ?? []).map((e) => e.kill()));
  });

  /** The engines a turn of `session` reached through `client`, in index order. */
  const reaching = async (client: OpenAI, session: string): Promise<number[]> => {
    const before = await Promise.all(engines.map(async (e) => (await e.counts())['/chat/completions'] ?? 0));
    await client.chat.completions.create({ model: 'warm-llm', messages: [{ role: 'user', content: `turn of ${session}` }], prompt_cache_key: session });
    const after = await Promise.all(engines.map(async (e) => (await e.counts())['/chat/completions'] ?? 0));
    return after.flatMap((n, i) => (n > before[i]! ? [i] : []));
  };
  /** The one engine a turn of `session` reached. */
  const turn = async (client: OpenAI, session: string): Promise<number> => {
    const reached = await reaching(client, session);
    expect(reached).toHaveLength(1);
    return reached[0]!;
  };

  it('keeps each session on one engine whichever replica serves its turns, and follows a session the other replica moved', async () => {
    const sessions = Array.from({ length: 12 }, (_, i) => `session-${i}-${randomUUID()}`);
    const placed = new Map<string, number>();
    for (const s of sessions) placed.set(s, await turn(clientA, s));
    // Twelve sessions on a ring of three engines: more than one engine holds sessions.
    expect(new Set(placed.values()).size).toBeGreaterThan(1);
    for (const s of sessions) expect(await turn(clientB, s)).toBe(placed.get(s));
    for (const s of sessions) expect(await turn(clientA, s)).toBe(placed.get(s));

    // The engine of the first session fails once: replica A retries the turn elsewhere,
    // cools the engine down and moves its sessions (the first to where its retry was served).
    const cooled = placed.get(sessions[0]!)!;
    await engines[cooled]!.script('/chat/completions', { type: 'error', status: 503 });
    const moved = sessions.filter((s) => placed.get(s) === cooled);
    const first = await reaching(clientA, sessions[0]!);
    expect(first).toHaveLength(2);
    expect(first).toContain(cooled);
    const movedTo = new Map<string, number>([[sessions[0]!, first.find((i) => i !== cooled)!]]);
    for (const s of moved.slice(1)) movedTo.set(s, await turn(clientA, s));
    for (const s of moved) expect(movedTo.get(s)).not.toBe(cooled);
    // Moved for good: A's next turns stay where they went.
    for (const s of moved) expect(await turn(clientA, s)).toBe(movedTo.get(s));

    // Replica B heard where each one went.
    for (const s of moved) expect(await turn(clientB, s)).toBe(movedTo.get(s));
    // The others never moved.
    for (const s of sessions.filter((x) => placed.get(x) !== cooled)) expect(await turn(clientB, s)).toBe(placed.get(s));

    // A replica started after the moves places each session itself once, is answered the
    // pin Redis holds, and sends the next turn there.
    const replicaC = await startTestServer({ yaml: replicaYaml, env });
    try {
      const clientC = new OpenAI({ baseURL: `${replicaC.baseUrl}/v1`, apiKey: (await replicaC.newTenant()).key, maxRetries: 0 });
      for (const s of moved) await turn(clientC, s);
      for (const s of moved) expect(await turn(clientC, s)).toBe(movedTo.get(s));
    } finally {
      await replicaC.close();
    }
  }, 60_000);
});

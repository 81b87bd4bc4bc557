/**
 * A key's own requests-per-minute: counted on the scope's limiter (one counter in Redis,
 * shared by every replica, when REDIS_URL is set), in place of the scope's limit for that
 * key, above it or below; refused 429 in each wire's envelope with the usual headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { tempDir } from '../../helpers/databases.js';

const LIMITED = {
  error: { message: 'Rate limit exceeded: too many requests per minute for this API key', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null },
};
const withRedis = await redisReachable();
if (!withRedis && process.env.SLUICE_TEST_REDIS_URL) throw new Error(`Redis at ${REDIS_URL} does not answer`);

/** A key with `policy`, made through the projects service: admin calls count under the operator's own limit, which is low here. */
async function keyWith(server: TestServer, policy: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const { projectId } = await server.newTenant();
  const { record, key } = await server.core.projects.createKey(projectId, 'rated', policy);
  return { key, id: record.id };
}

describe('rpm per key, in memory', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_RPM: '3' } });
  });
  afterAll(async () => server.close());

  it('a key below the scope limit is refused at its own, with its limit in the headers; other keys are untouched', async () => {
    const { key } = await keyWith(server, { rpm: 2 });
    for (const remaining of ['1', '0']) {
      const res = await call(server.baseUrl, 'GET', '/v1/models', { key });
      expect([res.status, res.headers.get('x-ratelimit-limit-requests'), res.headers.get('x-ratelimit-remaining-requests')]).toEqual([200, '2', remaining]);
    }
    const refused = await call(server.baseUrl, 'GET', '/v1/models', { key });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(LIMITED);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const messages = await call(server.baseUrl, 'POST', '/v1/messages', {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: 'x', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(429);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: LIMITED.error.message } });
    const { key: plain } = await keyWith(server, {});
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key: plain })).headers.get('x-ratelimit-limit-requests')).toBe('3');
  });

  it('a key above the scope limit gets its own', async () => {
    const { key } = await keyWith(server, { rpm: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(server.baseUrl, 'GET', '/v1/models', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('a change of rpm takes effect on the next call', async () => {
    const created = await keyWith(server, { rpm: 1 });
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key: created.key })).status).toBe(200);
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key: created.key })).status).toBe(429);
    await server.core.projects.updateKey(created.id, { rpm: 10 });
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key: created.key })).status).toBe(200);
  });
});

describe.runIf(withRedis)('rpm per key across two replicas on Redis', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const env = { RATE_LIMIT_RPM: '3', REDIS_URL, DATA_DIR: tempDir('sluice-rates-') };
    a = await startTestServer({ env });
    b = await startTestServer({ env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('the two replicas count one key against one limit, above the scope limit', async () => {
    // Each replica's first call may be counted before its Redis connection is ready (the limiter's per-replica insurance).
    const { key: warmUp } = await keyWith(a, {});
    for (const replica of [a, b]) expect((await call(replica.baseUrl, 'GET', '/v1/models', { key: warmUp })).status).toBe(200);
    const { key } = await keyWith(a, { rpm: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await call((i % 2 === 0 ? a : b).baseUrl, 'GET', '/v1/models', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });
});

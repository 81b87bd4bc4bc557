/** 429 insufficient_quota before any work, per-key rate limits, and one shared limit through Redis. */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const QUOTA = {
  error: {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
    code: 'insufficient_quota',
    param: null,
  },
};
const RATE_LIMITED = {
  error: {
    message: 'Rate limit exceeded: too many requests per minute for this API key',
    type: 'rate_limit_exceeded',
    code: 'rate_limit_exceeded',
    param: null,
  },
};
const whoami = (server: TestServer, key: string) => call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key });
const spend = (server: TestServer, key: string, costMicros: number) =>
  call(server.baseUrl, 'POST', `${PROBE}/spend`, { key, body: { cost_micros: costMicros } });

describe('insufficient quota', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ extendApp: registerProbeRoutes });
  });
  afterAll(async () => server.close());

  const usageCount = async (projectId: string) =>
    (await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/usage`, { headers: admin })).body.data.length;

  it('refuses a billable call with 429 insufficient_quota when the balance is zero or negative, doing no work', async () => {
    for (const balanceUsd of [0, -0.5]) {
      const tenant = await server.newTenant({ balanceUsd });
      const res = await spend(server, tenant.key, 1);
      expect(res.status).toBe(429);
      expect(res.body).toEqual(QUOTA);
      expect(res.headers.get('x-should-retry')).toBe('false');
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await usageCount(tenant.projectId)).toBe(0);
      expect((await server.core.projects.getProject(tenant.projectId)).balanceMicros).toBe(balanceUsd * 1_000_000);
    }
  });

  it('admits a call only when its estimate fits the balance, so the balance never overdraws', async () => {
    const tenant = await server.newTenant({ balanceUsd: 0.000003 }); // 3 micro-dollars
    expect((await spend(server, tenant.key, 2)).status).toBe(200); // 3 → 1
    const refused = await spend(server, tenant.key, 2); // 2 does not fit in 1
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        ...QUOTA.error,
        message:
          'Insufficient credit: this request may cost up to 0.000002 USD, and the free balance ' +
          '(the balance less the credit held by calls in flight) is 0.000001 USD.',
      },
    });
    expect((await spend(server, tenant.key, 1)).status).toBe(200); // 1 → 0
    expect((await spend(server, tenant.key, 1)).status).toBe(429);
    expect((await server.core.projects.getProject(tenant.projectId)).balanceMicros).toBe(0);
    expect(await usageCount(tenant.projectId)).toBe(2);
  });

  it('200 concurrent calls on credit for 20 serve exactly 20 and leave the balance at zero', async () => {
    const tenant = await server.newTenant({ balanceUsd: 0.00002 }); // 20 micro-dollars
    const answers = await Promise.all(Array.from({ length: 200 }, () => spend(server, tenant.key, 1)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(180);
    // A refusal while credit is held names the figures; once the balance is spent it is the plain one.
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
    }
    expect((await server.core.projects.getProject(tenant.projectId)).balanceMicros).toBe(0);
    expect(await usageCount(tenant.projectId)).toBe(20);
  });

  it('credits granted through the admin API re-open the project', async () => {
    const tenant = await server.newTenant({ balanceUsd: 0 });
    expect((await spend(server, tenant.key, 1)).status).toBe(429);
    await call(server.baseUrl, 'POST', `/admin/v1/projects/${tenant.projectId}/credits`, { headers: admin, body: { amount_usd: 0.01 } });
    expect((await spend(server, tenant.key, 1)).status).toBe(200);
  });

  it('non-billable calls still work without balance', async () => {
    const tenant = await server.newTenant({ balanceUsd: 0 });
    expect((await whoami(server, tenant.key)).status).toBe(200);
  });
});

describe('per-key rate limit (in memory)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_RPM: '3' }, extendApp: registerProbeRoutes });
  });
  afterAll(async () => server.close());

  it('allows 3 requests a minute per key, then answers 429 rate_limit_exceeded with retry-after', async () => {
    const tenant = await server.newTenant();
    for (let i = 0; i < 3; i++) {
      const ok = await whoami(server, tenant.key);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe(String(2 - i));
    }
    const limited = await whoami(server, tenant.key);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual(RATE_LIMITED);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('counts per key: another key of the same project has its own allowance', async () => {
    const tenant = await server.newTenant();
    for (let i = 0; i < 3; i++) expect((await whoami(server, tenant.key)).status).toBe(200);
    expect((await whoami(server, tenant.key)).status).toBe(429);
    const other = await server.core.projects.createKey(tenant.projectId, 'other');
    expect((await whoami(server, other.key)).status).toBe(200);
  });

  it('refused and unauthenticated requests do not use up an allowance', async () => {
    const tenant = await server.newTenant();
    for (let i = 0; i < 5; i++) expect((await whoami(server, 'sk-sluice-wrong')).status).toBe(403);
    for (let i = 0; i < 3; i++) expect((await whoami(server, tenant.key)).status).toBe(200);
  });

  it('keeps working per replica when Redis is unreachable', async () => {
    const offline = await startTestServer({
      env: { RATE_LIMIT_RPM: '3', REDIS_URL: 'redis://127.0.0.1:1' },
      extendApp: registerProbeRoutes,
    });
    try {
      const tenant = await offline.newTenant();
      for (let i = 0; i < 3; i++) expect((await whoami(offline, tenant.key)).status).toBe(200);
      const limited = await whoami(offline, tenant.key);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual(RATE_LIMITED);
    } finally {
      await offline.close();
    }
  });
});

const redisUp = await redisReachable(REDIS_URL);
if (!redisUp) console.warn(`Redis is not reachable at ${REDIS_URL}: the shared rate-limit tests are skipped`);

describe.skipIf(!redisUp)(`shared rate limit through Redis (${REDIS_URL})`, () => {
  const prefix = `sluice-test:${randomBytes(6).toString('hex')}`;
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    const yaml = `rate_limits:\n  redis_prefix: "${prefix}"\n`;
    first = await startTestServer({ env: { RATE_LIMIT_RPM: '3', REDIS_URL }, yaml, extendApp: registerProbeRoutes });
    // The second replica shares the first one's database, as replicas do.
    second = await startTestServer({
      env: { RATE_LIMIT_RPM: '3', REDIS_URL, DATA_DIR: first.dataDir },
      yaml,
      extendApp: registerProbeRoutes,
    });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    const client = new Redis(REDIS_URL);
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  });

  it('two replicas enforce one combined limit per key', async () => {
    const tenant = await first.newTenant();
    expect((await whoami(first, tenant.key)).status).toBe(200);
    expect((await whoami(second, tenant.key)).status).toBe(200);
    expect((await whoami(first, tenant.key)).status).toBe(200);
    for (const replica of [second, first]) {
      const limited = await whoami(replica, tenant.key);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual(RATE_LIMITED);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('the counter lives in Redis under the configured prefix', async () => {
    const tenant = await second.newTenant();
    expect((await whoami(second, tenant.key)).status).toBe(200);
    const client = new Redis(REDIS_URL);
    try {
      expect(await client.get(`${prefix}:${tenant.keyId}`)).toBe('1');
    } finally {
      client.disconnect();
    }
  });
});

/**
 * The meter of API-key calls with a key budget (src/domain/billing/key-budget-meter.ts),
 * driven on a real server's services and database: concurrent calls cannot overspend the
 * budget and every call it pays for is served; the refusal names the window, the limit
 * and the reset; a cap the caller did not set is lowered to what the budget affords; a
 * credit refusal gives the budget hold back; the spend survives a restart. Once with the
 * budget in the server's memory, once shared through Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { apiKeyPrincipal, type Principal } from '../../../src/domain/identity/caller.js';
import type { Admission, MeteredCall } from '../../../src/domain/billing/meter.js';
import type { BudgetWindow } from '../../../src/domain/identity/key-policy.types.js';
import { resetTimeOf, windowSpan } from '../../../src/domain/billing/budget-window.js';
import { isAppError, type AppError } from '../../../src/domain/shared/errors.js';
import { appErrorToHttp } from '../../../src/http/errors.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { Redis } from 'ioredis';

const MODEL = 'budgeted';
// 1,000 micro-dollars a token: a call of 10 input and 10 output tokens costs $0.02.
const YAML = `models:\n  ${MODEL}:\n    backend: openai\n    base_url: http://127.0.0.1:9/v1\n    price: { input_per_million_usd: 1000, output_per_million_usd: 1000 }\n`;
/** A fresh place in Redis: nothing another run or server left. */
let prefix = '';
const redisPlace = () => {
  prefix = `test-budget-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  return `budgets: { redis_prefix: "${prefix}" }\n`;
};
const withRedis = await redisReachable();
const LEDGERS = [
  { name: 'in memory', redis: false },
  { name: 'shared through Redis', redis: true },
].filter((l) => !l.redis || withRedis);
const CALL_MICROS = 20_000;

let server: TestServer;
let n = 0;

const call = (over: Partial<MeteredCall> = {}): MeteredCall => ({
  model: MODEL,
  route: '/v1/chat/completions',
  requestId: `req_${++n}`,
  inputTokens: 10,
  maxOutputTokens: 10,
  outputCapExplicit: true,
  ...over,
});

async function budgetedKey(limitMicros: number, window: BudgetWindow = 'day', balanceUsd = 100): Promise<Principal> {
  const tenant = await server.newTenant({ balanceUsd });
  return { ...apiKeyPrincipal(tenant.projectId, tenant.keyId), policy: { budget: { limitMicros, window } } };
}

const refusalOf = async (admitting: Promise<Admission>): Promise<AppError> => {
  const err = await admitting.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(err)) throw new Error(`expected an AppError refusal, got ${String(err)}`);
  return err;
};

const settleFull = (admission: Admission) => admission.settle({ inputTokens: 10, outputTokens: admission.outputCap ?? 10, status: 200 });

async function spentOf(keyId: string): Promise<number> {
  const rows = await server.core.database.db.selectFrom('usage_records').select('cost_micros').where('key_id', '=', keyId).execute();
  return rows.reduce((sum, r) => sum + Number(r.cost_micros), 0);
}

describe.each(LEDGERS)('a key budget on the meter ($name)', ({ redis }) => {
  const start = (env: Record<string, string> = {}) =>
    startTestServer({ yaml: YAML + (redis ? redisPlace() : ''), env: redis ? { ...env, REDIS_URL } : env });
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server.close();
  });

  it('200 concurrent calls on a budget for 20: exactly 20 served, none over, the rest refused naming the reset', async () => {
    const principal = await budgetedKey(20 * CALL_MICROS);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async () => {
        try {
          const admission = await server.core.keyMeter.admit(principal, call());
          await settleFull(admission);
          return 'served';
        } catch (err) {
          return isAppError(err) ? `${err.code}: ${err.message}` : String(err);
        }
      }),
    );
    const reset = resetTimeOf(windowSpan('day', Date.now()));
    expect(outcomes.filter((o) => o === 'served')).toHaveLength(20);
    expect(new Set(outcomes.filter((o) => o !== 'served'))).toEqual(new Set([`budget_exceeded: This key's day budget of $0.40 is spent; it resets at ${reset}.`]));
    expect(await spentOf(principal.keyId!)).toBe(20 * CALL_MICROS);
    if (redis) {
      // The budget was kept in Redis: spent, and no hold left.
      const client = new Redis(REDIS_URL);
      const state = `${prefix}:${principal.keyId}:day:${windowSpan('day', Date.now()).startMs}`;
      expect([await client.hget(state, 'spent'), await client.zcard(`${state}:holds`)]).toEqual([String(20 * CALL_MICROS), 0]);
      client.disconnect();
    }
  });

  it('the refusal is a 429 budget_exceeded with the reset time in a header, and not retried', async () => {
    const principal = await budgetedKey(CALL_MICROS, 'week');
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    const before = Date.now();
    const refusal = await refusalOf(server.core.keyMeter.admit(principal, call()));
    const after = Date.now();
    const reset = resetTimeOf(windowSpan('week', after))!;
    const http = appErrorToHttp(refusal);
    expect(http.status).toBe(429);
    expect(http.body).toEqual({
      error: { message: `This key's week budget of $0.02 is spent; it resets at ${reset}.`, type: 'rate_limit_exceeded', code: 'budget_exceeded', param: null },
    });
    expect(http.headers['x-sluice-budget-reset']).toBe(reset);
    expect(http.headers['x-should-retry']).toBe('false');
    const retryAfter = Number(http.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((Date.parse(reset) - after) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((Date.parse(reset) - before) / 1000));
  });

  it('a budget that cannot pay the call’s worst case refuses it, naming what is left; a total budget never resets', async () => {
    const principal = await budgetedKey(CALL_MICROS + 5_000, 'total');
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    const refusal = await refusalOf(server.core.keyMeter.admit(principal, call()));
    expect(refusal.message).toBe("This key's total budget of $0.025 has $0.005 left, less than this request needs (at least $0.02); it does not reset.");
    expect(appErrorToHttp(refusal).headers['x-sluice-budget-reset']).toBeUndefined();
  });

  it('a call that set no cap is lowered to what the budget affords, and the credit holds for that cap', async () => {
    const principal = await budgetedKey(15_000);
    const admission = await server.core.keyMeter.admit(principal, call({ maxOutputTokens: 100, outputCapExplicit: false }));
    // 15,000 micro-dollars: 10 input tokens and 5 output tokens.
    expect(admission.outputCap).toBe(5);
    expect(admission.headers).toEqual({ 'x-sluice-output-cap-lowered': '5' });
    expect(server.core.reservations.heldFor(principal.projectId)).toBe(15_000);
    await admission.settle({ inputTokens: 10, outputTokens: 5, status: 200 });
    expect(server.core.reservations.heldFor(principal.projectId)).toBe(0);
    expect((await refusalOf(server.core.keyMeter.admit(principal, call()))).message).toMatch(/^This key's day budget of \$0\.015 is spent; it resets at /);
  });

  it('a refusal by the credit gives the budget hold back', async () => {
    const principal = await budgetedKey(CALL_MICROS, 'day', 0.01);
    expect((await refusalOf(server.core.keyMeter.admit(principal, call()))).code).toBe('insufficient_quota');
    await server.core.projects.grantCredits(principal.projectId, 1_000_000);
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    expect(await spentOf(principal.keyId!)).toBe(CALL_MICROS);
  });

  it('a call released without charge gives its budget back', async () => {
    const principal = await budgetedKey(CALL_MICROS);
    (await server.core.keyMeter.admit(principal, call())).release();
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    expect(await spentOf(principal.keyId!)).toBe(CALL_MICROS);
  });

  it('a call waits for the key’s other calls to end instead of being refused', async () => {
    const principal = await budgetedKey(CALL_MICROS);
    const first = await server.core.keyMeter.admit(principal, call());
    const second = server.core.keyMeter.admit(principal, call());
    first.release();
    await settleFull(await second);
    expect(await spentOf(principal.keyId!)).toBe(CALL_MICROS);
  });

  it('a key without a budget is metered by credit alone', async () => {
    const tenant = await server.newTenant({ balanceUsd: 1 });
    const principal = apiKeyPrincipal(tenant.projectId, tenant.keyId);
    for (let i = 0; i < 3; i++) await settleFull(await server.core.keyMeter.admit(principal, call()));
    expect(await spentOf(tenant.keyId)).toBe(3 * CALL_MICROS);
  });

  it.runIf(redis)('the hold of a replica that died expires, and a call waiting on another replica is then served', async () => {
    const principal = await budgetedKey(CALL_MICROS);
    const place = redisPlace().replace('}', ', hold_ttl_seconds: 5 }');
    const settings = `${YAML}${place}billing: { hold_wait_ms: 20000 }\n`;
    const doomed = await startTestServer({ yaml: settings, env: { ...server.dataEnv, REDIS_URL } });
    const other = await startTestServer({ yaml: settings, env: { ...server.dataEnv, REDIS_URL } });
    try {
      await doomed.core.keyMeter.admit(principal, call());
      const client = new Redis(REDIS_URL);
      const state = `${prefix}:${principal.keyId}:day:${windowSpan('day', Date.now()).startMs}`;
      const holds = await client.zrange(`${state}:holds`, 0, -1, 'WITHSCORES');
      // One hold of the call's worst case, expiring within the TTL.
      expect(holds).toEqual([expect.stringMatching(new RegExp(`:${CALL_MICROS}$`)), expect.any(String)]);
      expect(Number(holds[1]) - Date.now()).toBeLessThanOrEqual(5_000);
      // The replica stops refreshing its hold (it died with its call): the hold stays in Redis until it expires.
      await doomed.close();
      await settleFull(await other.core.keyMeter.admit(principal, call()));
      expect(await client.zcard(`${state}:holds`)).toBe(0);
      expect(await client.hget(state, 'spent')).toBe(String(CALL_MICROS));
      client.disconnect();
      expect(await spentOf(principal.keyId!)).toBe(CALL_MICROS);
    } finally {
      await other.close();
    }
  }, 30_000);

  it('the spend survives a restart: it is read from the usage records', async () => {
    const principal = await budgetedKey(2 * CALL_MICROS);
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    await settleFull(await server.core.keyMeter.admit(principal, call()));
    // With Redis: a fresh place, as when Redis lost the state; the spend is read back from the database.
    const restarted = await start(server.dataEnv);
    try {
      expect((await refusalOf(restarted.core.keyMeter.admit(principal, call()))).code).toBe('budget_exceeded');
    } finally {
      await restarted.close();
    }
  });
});

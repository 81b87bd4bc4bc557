/**
 * The credit rule over HTTP (src/domain/billing/billing.service.ts): a call is admitted
 * only while the balance is above zero; its cost is debited when it ends, so the balance
 * goes below zero by at most the cost of the calls in flight when it crossed zero, and
 * the next call is refused with 429 insufficient_quota.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
/** Every call costs 11 + 7 tokens at $1/M each way = 18 µ$. */
const COST = 18;

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: { 'llama-3.1-8b-instruct-fast': { price: { input_per_million_usd: 1, output_per_million_usd: 1 } } },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const hello = { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'Hello' }] };
const chat = (key: string) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello });

const QUOTA_ERROR = {
  error: {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
    code: 'insufficient_quota',
    param: null,
  },
};

it('admits 50 concurrent calls on a tiny balance, debits every one, then refuses the next', async () => {
  // Slow answers keep all 50 in flight together: each was admitted while the balance was positive.
  env.upstream.chat({ delayMs: 500 });
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  expect(await balanceOf(env.server, tenant.projectId)).toBe(100);
  const results = await Promise.all(Array.from({ length: 50 }, () => chat(tenant.key)));
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 429);
  expect(ok + refused.length).toBe(50);
  for (const r of refused) expect(r.body).toEqual(QUOTA_ERROR);

  const final = await balanceOf(env.server, tenant.projectId);
  const records = await usageOf(env.server, tenant.projectId);
  expect(records).toHaveLength(ok);
  expect(records.reduce((sum, r) => sum + r.costMicros, 0)).toBe(100 - final);
  expect(final).toBe(100 - ok * COST);
  // The rule: below zero by no more than the cost of the calls in flight (all 50 at most).
  expect(final).toBeGreaterThanOrEqual(-(50 * COST));
  // With every call in flight before the first one finished, all 50 were admitted.
  expect(ok).toBe(50);
  expect(final).toBe(-800);

  env.upstream.chat({ delayMs: 0 });
  const later = await chat(tenant.key);
  expect(later.status).toBe(429);
  expect(later.body).toEqual(QUOTA_ERROR);
  expect(later.headers.get('x-should-retry')).toBe('false');
  expect(env.upstream.count('/chat/completions')).toBe(50);
});

it('refuses the first sequential call after the balance reaches zero or below', async () => {
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await chat(tenant.key)).status);
  // 100 → 82 → 64 → 46 → 28 → 10 → -8: six admitted, the seventh refused.
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  expect(await balanceOf(env.server, tenant.projectId)).toBe(-8);
  expect(await usageOf(env.server, tenant.projectId)).toHaveLength(6);
  expect(env.upstream.count('/chat/completions')).toBe(6);
});

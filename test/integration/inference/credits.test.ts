/**
 * The credit rule over HTTP (src/domain/billing/credit-meter.ts): a call is admitted only
 * when its estimate (input bytes plus 8 framing tokens per message at the input price,
 * its output cap at the output price) fits in the balance less the holds of the calls in
 * flight; the actual cost replaces the hold when it ends. Otherwise 429 insufficient_quota.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
/** Every call costs 11 + 7 tokens at $1/M each way = 18 µ$, and is estimated at ("Hello": 5 bytes + 8) + 7 = 20 µ$. */
const COST = 18;

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: { 'llama-3.1-8b-instruct-fast': { price: { input_per_million_usd: 1, output_per_million_usd: 1 }, max_output_tokens: 7 } },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const hello = { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'Hello' }] };
const chat = (key: string) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello });

/** The refusal of a call of "Hello" (13 input tokens) with this output cap, on this much free credit (µ$). */
const quotaError = (cap: number, freeMicros: number, explicit: boolean) => {
  const usd = (micros: number) => (micros / 1e6).toFixed(6);
  const affords = Math.max(0, Math.min(cap, freeMicros - 13));
  return {
    error: {
      message:
        `Insufficient credit: this request may cost up to ${usd(13 + cap)} USD (13 input tokens at most, an output cap of ${cap} tokens), ` +
        `and the free balance (the balance less the credit held by calls in flight) is ${usd(freeMicros)} USD, ` +
        `which affords an output cap of at most ${affords} tokens` +
        (explicit ? '. Lower the output cap, or add credit.' : `, fewer than the minimum of ${cap}. Add credit.`),
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      param: null,
    },
  };
};

it('admits only what the balance covers: 50 concurrent calls on 100 µ$ serve 5, and the balance never goes below zero', async () => {
  // Slow answers keep every admitted call in flight together, each holding its estimate.
  env.upstream.chat({ delayMs: 500 });
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  const results = await Promise.all(Array.from({ length: 50 }, () => chat(tenant.key)));
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 429);
  expect(ok).toBe(5); // 100 µ$ / 20 µ$ estimated each
  expect(refused).toHaveLength(45);
  // Five holds of 20 µ$ leave less than the 13 µ$ of input free (a call that ended gives back the 2 µ$ its
  // estimate exceeded its cost); the model's default cap (7) is below the minimum of 16, so it is not lowered.
  for (const r of refused) {
    const free = Number(/is (\d+\.\d{6}) USD/.exec(r.body.error.message)?.[1]) * 1e6;
    expect(free).toBeLessThan(13);
    expect(r.body).toEqual(quotaError(7, Math.round(free), false));
  }
  expect(env.upstream.count('/chat/completions')).toBe(5);

  const final = await balanceOf(env.server, tenant.projectId);
  const records = await usageOf(env.server, tenant.projectId);
  expect(records).toHaveLength(5);
  expect(records.reduce((sum, r) => sum + r.costMicros, 0)).toBe(5 * COST);
  expect(final).toBe(100 - 5 * COST);

  // 10 µ$ left is less than one call's estimate.
  env.upstream.chat({ delayMs: 0 });
  const later = await chat(tenant.key);
  expect(later.status).toBe(429);
  expect(later.body).toEqual(quotaError(7, 10, false));
  expect(later.headers.get('x-should-retry')).toBe('false');
});

it('refuses the first sequential call whose estimate no longer fits', async () => {
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await chat(tenant.key)).status);
  // 100 → 82 → 64 → 46 → 28 → 10: five admitted; 10 < 20 refuses the sixth.
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  expect(await balanceOf(env.server, tenant.projectId)).toBe(10);
  expect(await usageOf(env.server, tenant.projectId)).toHaveLength(5);
  expect(env.upstream.count('/chat/completions')).toBe(5);
});

it("prices the estimate on the request's own output cap, else the model's default", async () => {
  const tenant = await env.server.newTenant({ balanceUsd: 0.00002 }); // 20 µ$
  // max_tokens 100: 13 + 100 = 113 µ$ estimated does not fit 20 µ$, though the call would cost 18.
  const capped = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { ...hello, max_tokens: 100 } });
  expect(capped.status).toBe(429);
  expect(capped.body).toEqual(quotaError(100, 20, true));
  // The model's default (max_output_tokens: 7 in the config): 13 + 7 = 20 µ$ fits exactly.
  expect((await chat(tenant.key)).status).toBe(200);
  expect(await balanceOf(env.server, tenant.projectId)).toBe(2);
});

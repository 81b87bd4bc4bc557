/**
 * The credit rule over HTTP (src/domain/billing/credit-meter.ts): a call is admitted only
 * when its estimate (input bytes plus 8 framing tokens per message and 8 for the
 * conversation's template at the input price, its output cap at the output price) fits in
 * the balance less the holds of the calls in flight; the actual cost replaces the hold
 * when it ends. Otherwise 429 insufficient_quota. This server does not wait for held
 * credit (BILLING_HOLD_WAIT_MS=0), so a call refused beside other calls' holds is refused
 * at once and the rule itself shows (burst.test.ts covers the wait).
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
/** Every call costs 11 + 7 tokens at $1/M each way = 18 µ$, and is estimated at ("Hello": 5 bytes + 8 + 8) + 7 = 28 µ$. */
const COST = 18;

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: { 'llama-3.1-8b-instruct-fast': { price: { input_per_million_usd: 1, output_per_million_usd: 1 }, max_output_tokens: 7 } },
    env: { BILLING_HOLD_WAIT_MS: '0' },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const hello = { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'Hello' }] };
const chat = (key: string) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello });
const usd = (micros: number) => (micros / 1e6).toFixed(6);
const quota = (message: string) => ({ error: { message, type: 'insufficient_quota', code: 'insufficient_quota', param: null } });

/** The refusal of a call of "Hello" (21 input tokens) whose explicit cap the credit cannot cover. */
const capRefusal = (cap: number, freeMicros: number) =>
  quota(
    `Insufficient credit: this request may cost up to ${usd(21 + cap)} USD (21 input tokens at most, an output cap of ${cap} tokens), ` +
      `and the free balance (the balance less the credit held by calls in flight) is ${usd(freeMicros)} USD, ` +
      `which affords an output cap of at most ${Math.max(0, Math.min(cap, freeMicros - 21))} tokens. Lower the output cap, or add credit.`,
  );

/** The refusal of a call without a cap whose balance cannot pay its input (21 µ$) and one output token. */
const balanceRefusal = (balanceMicros: number) =>
  quota(
    'Insufficient credit: this request needs at least 0.000022 USD (21 input tokens at most and one output token), ' +
      `and the balance is ${usd(balanceMicros)} USD. Add credit.`,
  );

it('admits only what the balance covers: 50 concurrent calls on 100 µ$, and the balance never goes below zero', async () => {
  // Slow answers keep the admitted calls in flight together, each holding its estimate.
  env.upstream.chat({ delayMs: 500 });
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  const results = await Promise.all(Array.from({ length: 50 }, () => chat(tenant.key)));
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 429);
  // 100 µ$ / 28 µ$ estimated: three at once; calls that arrive after some settled may find more
  // (100 → 82 → 64 → 46 → 28 → 10 pays for five in all).
  expect(ok).toBeGreaterThanOrEqual(3);
  expect(ok).toBeLessThanOrEqual(5);
  expect(refused).toHaveLength(50 - ok);
  // Each refusal: the balance then would pay (it names it), but the holds in flight left less free than
  // the call may run with beside them: its input and the minimum cap, here its whole default cap of 7
  // (28 µ$). It is refused after the 0 ms this server waits.
  const held = /^Insufficient credit: this request needs at least 0\.000022 USD \(21 input tokens at most and one output token\), and the balance is (0\.\d{6}) USD, but calls in flight held all but (0\.\d{6}) USD of it for the 0 ms this request waited\. Retry later, or add credit\.$/;
  for (const r of refused) {
    expect(r.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
    // A call that arrived after the fifth settled finds 10 µ$: the balance itself no longer pays.
    if (r.body.error.message === balanceRefusal(10).error.message) continue;
    const [, balance, free] = held.exec(r.body.error.message) ?? [];
    expect(Number(balance) * 1e6).toBeGreaterThanOrEqual(22);
    expect(Number(free) * 1e6).toBeLessThan(28);
  }
  expect(env.upstream.count('/chat/completions')).toBe(ok);

  const final = await balanceOf(env.server, tenant.projectId);
  const records = await usageOf(env.server, tenant.projectId);
  expect(records).toHaveLength(ok);
  expect(records.reduce((sum, r) => sum + r.costMicros, 0)).toBe(ok * COST);
  expect(final).toBe(100 - ok * COST);
  expect(final).toBeGreaterThanOrEqual(0);

  // 21 µ$ pays for the input estimate, not for one output token more: refused at once, naming both.
  env.upstream.chat({ delayMs: 0 });
  const poor = await env.server.newTenant({ balanceUsd: 0.000021 });
  const later = await chat(poor.key);
  expect(later.status).toBe(429);
  expect(later.body).toEqual(balanceRefusal(21));
  expect(later.headers.get('x-should-retry')).toBe('false');
});

it('refuses the first sequential call whose estimate no longer fits', async () => {
  const tenant = await env.server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await chat(tenant.key)).status);
  // 100 → 82 → 64 → 46 → 28 → 10: five admitted (28 fits the estimate exactly); 10 < 22 refuses the sixth.
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  expect(await balanceOf(env.server, tenant.projectId)).toBe(10);
  expect(await usageOf(env.server, tenant.projectId)).toHaveLength(5);
  expect(env.upstream.count('/chat/completions')).toBe(5);
});

it("prices the estimate on the request's own output cap, else the model's default", async () => {
  const tenant = await env.server.newTenant({ balanceUsd: 0.000028 }); // 28 µ$
  // max_tokens 100: 21 + 100 = 121 µ$ estimated does not fit 28 µ$, though the call would cost 18.
  const capped = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { ...hello, max_tokens: 100 } });
  expect(capped.status).toBe(429);
  expect(capped.body).toEqual(capRefusal(100, 28));
  // The model's default (max_output_tokens: 7 in the config): 21 + 7 = 28 µ$ fits exactly.
  expect((await chat(tenant.key)).status).toBe(200);
  expect(await balanceOf(env.server, tenant.projectId)).toBe(28 - COST);
});

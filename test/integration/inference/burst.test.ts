/**
 * A burst at a low balance (src/domain/billing/credit-meter.ts): calls without an output
 * cap must not hold the whole balance one after another and refuse the rest; a call that
 * finds the credit held by calls in flight waits for a release (BILLING_HOLD_WAIT_MS)
 * instead, and is refused only when the balance cannot pay for it or the wait runs out.
 *
 * Figures: 1,000 USD per million tokens each way is 1,000 µ$ a token. "Hello" is
 * estimated at 5 bytes + 8 + 8 = 21 input tokens; the upstream reports 10 input tokens and
 * writes up to 4, so a call costs 14,000 µ$ (0.014 USD) and 0.28 USD pays for 20 of them.
 * After the burst, a call is refused once the balance is below its input estimate and one output token
 * (22,000 µ$): after 19 calls 14,000 µ$ are left, so at most 19 are served.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { arrivals } from '../../helpers/arrivals.js';
import { call } from '../../helpers/harness.js';
import { cappedUpstream } from '../../helpers/capped-upstream.js';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

const MODEL = 'llama-3.1-8b-instruct-fast';
const PRICED = { [MODEL]: { price: { input_per_million_usd: 1000, output_per_million_usd: 1000 } } };
const hello = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }] };
const CALL_COST = 14_000;
const BALANCE = 280_000;

/** The upstream: 10 input tokens reported, answers of up to 4 tokens, after `delayMs`. */
const upstreamOf = (upstream: FakeUpstream, delayMs = 0) => cappedUpstream(upstream, { promptTokens: 10, words: 4, delayMs });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Answer = Awaited<ReturnType<typeof call>>;

describe('200 calls on credit for 20', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    // Each call without a cap holds what is free (its allowance costs more than the balance), so the
    // calls run one after another, each waiting for the one before: at the speed of the database and of
    // a machine other suites share. The wait is set long enough that only the rule decides who is served.
    env = await startInferenceEnv({ extra: PRICED, env: { RATE_LIMIT_RPM: '100000', BILLING_HOLD_WAIT_MS: '10000' } });
  });
  afterAll(async () => env.close());
  beforeEach(() => env.upstream.reset());

  for (const [arrival, burst] of arrivals<Answer>()) {
    it(`${arrival}: at least 18 of the 20 affordable calls are served, and the debits are exactly the usage`, async () => {
      upstreamOf(env.upstream);
      const tenant = await env.server.newTenant({ balanceUsd: BALANCE / 1e6 });
      const answers = await burst(() => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello }), 200);
      const served = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(served.length).toBeGreaterThanOrEqual(18);
      expect(served.length).toBeLessThanOrEqual(19);
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
      }
      // Served calls that came before the balance ran low answered in full.
      expect(served.filter((a) => a.body.usage.completion_tokens === 4).length).toBeGreaterThanOrEqual(18);
      const records = await usageOf(env.server, tenant.projectId);
      expect(records).toHaveLength(served.length);
      const final = await balanceOf(env.server, tenant.projectId);
      expect(final).toBeGreaterThanOrEqual(0);
      expect(BALANCE - final).toBe(records.reduce((sum, r) => sum + r.costMicros, 0));
      // What is left no longer pays for a call's input estimate and one output token; the next call says so.
      expect(final).toBeLessThan(22_000);
      const next = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello });
      expect(next.status).toBe(429);
      expect(next.body.error.message).toBe(
        'Insufficient credit: this request needs at least 0.022000 USD (21 input tokens at most and one output token), ' +
          `and the balance is ${(final / 1e6).toFixed(6)} USD. Add credit.`,
      );
    });
  }
});

describe('the default output allowance (BILLING_DEFAULT_HOLD_TOKENS)', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    env = await startInferenceEnv({ extra: PRICED, env: { RATE_LIMIT_RPM: '100000', BILLING_DEFAULT_HOLD_TOKENS: '10' } });
  });
  afterAll(async () => env.close());
  beforeEach(() => env.upstream.reset());

  it('a call without a cap holds the allowance, not the whole balance, so a burst runs side by side', async () => {
    // Each call holds 21 + 10 tokens (31,000 µ$): nine at once on 0.28 USD.
    const counter = upstreamOf(env.upstream, 200);
    const tenant = await env.server.newTenant({ balanceUsd: BALANCE / 1e6 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello })),
    );
    const served = answers.filter((a) => a.status === 200);
    expect(served.length).toBeGreaterThanOrEqual(18);
    for (const a of served.filter((s) => s.headers.get('x-sluice-output-cap-lowered') === '10')) expect(a.body.usage.completion_tokens).toBe(4);
    expect(env.upstream.requests.filter((r) => r.body.max_tokens === 10).length).toBeGreaterThanOrEqual(9);
    expect(counter.maxInFlight()).toBeGreaterThan(1);
    const records = await usageOf(env.server, tenant.projectId);
    expect(BALANCE - (await balanceOf(env.server, tenant.projectId))).toBe(records.reduce((sum, r) => sum + r.costMicros, 0));
  });
});

describe('wait, then refuse (BILLING_HOLD_WAIT_MS)', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    env = await startInferenceEnv({ extra: PRICED, env: { BILLING_HOLD_WAIT_MS: '300' } });
  });
  afterAll(async () => env.close());
  beforeEach(() => env.upstream.reset());

  const chat = (key: string) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello });

  it('a call that finds the credit held waits for the release and is served', async () => {
    upstreamOf(env.upstream, 100);
    const tenant = await env.server.newTenant({ balanceUsd: 0.05 });
    // The first holds all 50,000 µ$ (a cap of 29 tokens); the second waits for it to end.
    const [first, second] = await Promise.all([chat(tenant.key), sleep(20).then(() => chat(tenant.key))]);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-sluice-output-cap-lowered')).toBe('29');
    expect(second.status).toBe(200);
    expect(await balanceOf(env.server, tenant.projectId)).toBe(50_000 - 2 * CALL_COST);
  });

  it('refuses once the wait runs out, naming what the call needs, the balance and what was free', async () => {
    upstreamOf(env.upstream, 1_500);
    const tenant = await env.server.newTenant({ balanceUsd: 0.05 });
    const first = chat(tenant.key);
    await sleep(100);
    const second = await chat(tenant.key);
    expect(second.status).toBe(429);
    expect(second.body).toEqual({
      error: {
        message:
          'Insufficient credit: this request needs at least 0.022000 USD (21 input tokens at most and one output token), ' +
          'and the balance is 0.050000 USD, but calls in flight held all but 0.000000 USD of it for the 300 ms this request waited. ' +
          'Retry later, or add credit.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
        param: null,
      },
    });
    expect((await first).status).toBe(200);
    expect(env.upstream.count('/chat/completions')).toBe(1);
  });
});

/**
 * A burst at a low balance on a storefront receipt (src/domain/storefront/storefront-meter.ts):
 * the same hold rules as /v1. Calls without an output cap wait for the credit that calls
 * in flight hold instead of being refused, no call is admitted that the receipt's credit
 * does not pay for, and every usage record is drawn in full from the ledger.
 *
 * Figures: 1 USD per million input tokens and 2 per million output tokens. "Hi" is
 * estimated at 2 bytes + 8 + 8 = 18 input tokens (18 µ$); the upstream reports 11 input
 * tokens and writes up to 7, so a call costs 25 µ$ and a receipt of 500 µ$ pays for 20.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { post, startStorefront, type StorefrontEnv } from './support.js';
import { arrivals } from '../../helpers/arrivals.js';
import { cappedUpstream } from '../../helpers/capped-upstream.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { newId } from '../../../src/domain/shared/ids.js';
import { storefrontProjectId } from '../../../src/domain/storefront/sellers.js';

const CHAT = '/gateway/v1/chat/completions';
const CREDIT = 500;

let env: StorefrontEnv;
beforeAll(async () => {
  // The calls of a burst run one after another (each holds what is free), each waiting for the one
  // before; the wait is set long enough that the rule, not the shared machine's speed, decides.
  env = await startStorefront({ agents: 1, yamlExtra: '  requests_per_minute: 100000\n', env: { BILLING_HOLD_WAIT_MS: '10000' } });
});
afterAll(async () => env?.close());
beforeEach(() => env.upstream.reset());

async function receiptWith(micros: number): Promise<string> {
  const receipt = newReceiptId();
  await env.server.features.storefront.services!.store.purchase({
    id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'receipt', receiptId: receiptHash(receipt) }, kind: 'purchase',
    amountMicros: micros, paymentRef: `test:${receipt}`, rail: 'x402', detail: null, createdAtMs: Date.now(),
  });
  return receipt;
}

type Answer = Awaited<ReturnType<typeof post>>;

describe('200 calls on a receipt that pays for 20', () => {
  for (const [arrival, burst] of arrivals<Answer>()) {
    it(`${arrival}: at least 18 are served, the receipt never goes below zero, and the draws are exactly the usage`, async () => {
      cappedUpstream(env.upstream, { promptTokens: 11, words: 7 });
      const receipt = await receiptWith(CREDIT);
      const holder = { kind: 'receipt' as const, receiptId: receiptHash(receipt) };
      const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] };
      const answers = await burst(() => post(env, CHAT, body, { authorization: `Receipt ${receipt}` }), 200);
      const served = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(served.length).toBeGreaterThanOrEqual(18);
      expect(served.length).toBeLessThanOrEqual(20);
      for (const r of refused) {
        expect(r.status).toBe(402);
        expect(['receipt_credit_insufficient', 'receipt_credit_exhausted']).toContain(r.body.error);
      }
      const { store } = env.server.features.storefront.services!;
      const account = (await store.account('sluice', holder))!;
      expect(account.balanceMicros).toBeGreaterThanOrEqual(0);
      // Less than a call's input estimate and one output token (20 µ$) is left.
      expect(account.balanceMicros).toBeLessThan(20);
      // One usage record per served call, each drawn in full: nothing was served on credit the receipt did not have.
      const records = await env.server.core.repositories.usage.listByProject(storefrontProjectId('sluice'), 500);
      const ours = records.items.filter((r) => r.payer.kind === 'receipt' && r.payer.id === holder.receiptId);
      expect(ours).toHaveLength(served.length);
      const draws = (await store.movements('sluice', holder)).filter((m) => m.kind === 'draw');
      expect(draws.map((m) => -m.amountMicros).sort()).toEqual(ours.map((r) => r.costMicros).sort());
      expect(CREDIT - account.balanceMicros).toBe(ours.reduce((sum, r) => sum + r.costMicros, 0));
    });
  }
});

it('an agent whose Credits are held by its calls in flight waits for them, then is served', async () => {
  cappedUpstream(env.upstream, { promptTokens: 11, words: 7, delayMs: 100 });
  const agent = env.agents[0]!;
  const token = await env.tokenOf(agent);
  await env.server.features.storefront.services!.store.purchase({
    id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId: agent.id }, kind: 'purchase',
    amountMicros: 60, paymentRef: `test:${agent.id}`, rail: 'card', detail: null, createdAtMs: Date.now(),
  });
  // The first call holds all 60 µ$ (a cap of 21 tokens); the second finds none free and waits.
  const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] };
  const [first, second] = await Promise.all([
    post(env, CHAT, body, { authorization: `Bearer ${token}` }),
    new Promise((resolve) => setTimeout(resolve, 20)).then(() => post(env, CHAT, body, { authorization: `Bearer ${token}` })),
  ]);
  expect(first.status).toBe(200);
  expect(first.headers.get('x-sluice-output-cap-lowered')).toBe('21');
  expect(second.status).toBe(200);
  const account = await env.server.features.storefront.services!.store.account('sluice', { kind: 'agent', agentId: agent.id });
  expect(account!.balanceMicros).toBe(60 - 2 * 25);
});

it('an upstream that counts more input than the estimate (its template\'s own prompt) is learned from: a burst after it draws every call in full', async () => {
  // "Hi" is estimated at 18 input tokens; this upstream reports 40, so a call costs 40 + 7 × 2 = 54 µ$.
  cappedUpstream(env.upstream, { promptTokens: 40, words: 7 });
  const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 7 };
  const first = await receiptWith(1_000);
  expect((await post(env, CHAT, body, { authorization: `Receipt ${first}` })).status).toBe(200);
  // The first call held 32 µ$ and drew 54; later calls hold 54.
  const receipt = await receiptWith(20 * 54);
  const holder = { kind: 'receipt' as const, receiptId: receiptHash(receipt) };
  const answers = await Promise.all(Array.from({ length: 200 }, () => post(env, CHAT, body, { authorization: `Receipt ${receipt}` })));
  const served = answers.filter((a) => a.status === 200).length;
  expect(served).toBeGreaterThanOrEqual(18);
  expect(served).toBeLessThanOrEqual(20);
  const { store } = env.server.features.storefront.services!;
  const draws = (await store.movements('sluice', holder)).filter((m) => m.kind === 'draw');
  expect(draws.map((m) => m.amountMicros)).toEqual(Array(served).fill(-54));
  expect((await store.account('sluice', holder))!.balanceMicros).toBe(20 * 54 - served * 54);
});

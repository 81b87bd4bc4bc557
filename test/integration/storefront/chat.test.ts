/**
 * The storefront chat route against the fake upstream: each credential draws on its
 * credit; every error of the spec's tables with its status and body; 200 concurrent
 * calls on one receipt never overdraw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newAgent, post, startStorefront, type StorefrontEnv } from './support.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { newId } from '../../../src/domain/shared/ids.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({ agents: 3, env: { RATE_LIMIT_RPM: '1000' } });
});
afterAll(async () => env?.close());

const CHAT = '/gateway/v1/chat/completions';
const body = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }], ...extra });

/** A receipt holding `micros`, credited through the ledger as a purchase would. */
async function receiptWith(micros: number, sellerId = 'sluice'): Promise<string> {
  const receipt = newReceiptId();
  await env.server.features.storefront.services!.store.purchase({
    id: newId('mov_'), sellerId, holder: { kind: 'receipt', receiptId: receiptHash(receipt) }, kind: 'purchase',
    amountMicros: micros, paymentRef: `test:${receipt}`, rail: 'x402', detail: null, createdAtMs: Date.now(),
  });
  return receipt;
}

const balanceOf = async (receipt: string) =>
  (await env.server.features.storefront.services!.store.account('sluice', { kind: 'receipt', receiptId: receiptHash(receipt) }))!.balanceMicros;

describe('credentials that pay', () => {
  it('a receipt bought anonymously over x402 pays for calls until it runs out', async () => {
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())));
    const bought = await wrapFetchWithPayment(fetch, client)(`${env.url}/plans/credits/purchase`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amountUsd: '0.01' }),
    });
    const { receipt } = (await bought.json()) as { receipt: string };
    const answer = await post(env, CHAT, body({ max_tokens: 16 }), { authorization: `Receipt ${receipt}` });
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('Hello from the fake upstream.');
    // 11 input tokens at $1/M and 7 output tokens at $2/M: 25 micro-dollars.
    expect(await balanceOf(receipt)).toBe(10_000 - 25);
    expect(answer.headers.get('x-credit-remaining-usd')).toBe('0.009975');
  });

  it('an agent token draws on the agent\'s Credits', async () => {
    const agent = env.agents[0]!;
    const token = await env.tokenOf(agent);
    await env.server.features.storefront.services!.store.purchase({
      id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId: agent.id }, kind: 'purchase',
      amountMicros: 1_000_000, paymentRef: `test:${agent.id}`, rail: 'card', detail: null, createdAtMs: Date.now(),
    });
    const answer = await post(env, CHAT, body(), { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    const account = await env.server.features.storefront.services!.store.account('sluice', { kind: 'agent', agentId: agent.id });
    expect(account).toMatchObject({ balanceMicros: 1_000_000 - 25, consumedMicros: 25 });
    const streamed = await fetch(`${env.url}${CHAT}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body({ stream: true })),
    });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('data: [DONE]');
  });
});

describe('errors of the storefront chat route', () => {
  it('model is checked before the credential', async () => {
    const missing = await post(env, CHAT, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/model/);
    const badJson = await fetch(`${env.url}${CHAT}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' });
    expect(badJson.status).toBe(400);
    const unrouted = await post(env, CHAT, body({ model: 'bge-small-en-v1.5' }));
    expect(unrouted.status).toBe(400);
    expect(unrouted.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('no credential: 401 bearer_required with hint and auth', async () => {
    const response = await post(env, CHAT, body());
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: 'bearer_required',
      message: expect.any(String),
      hint: expect.any(String),
      auth: {
        recipe: expect.objectContaining({ tokenUrl: '/storefront/oauth2/token', grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }),
        presentation: { scheme: 'Bearer', standardHeader: 'Authorization', alternateHeader: 'GW-Agent-Authorization' },
      },
    });
  });

  it('context_length_exceeded is 420 with param messages', async () => {
    const receipt = await receiptWith(1_000_000);
    const long = 'word '.repeat(140_000);
    const response = await post(env, CHAT, body({ messages: [{ role: 'user', content: long }] }), { authorization: `Receipt ${receipt}` });
    expect(response.status).toBe(420);
    expect(response.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  it('invalid_receipt: malformed, unknown, or issued by another seller', async () => {
    for (const value of ['rcpt_short', newReceiptId(), await receiptWith(1_000, 'other-seller'), '0xabcdef']) {
      const response = await post(env, CHAT, body(), { authorization: `Receipt ${value}` });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ error: 'invalid_receipt' });
    }
  });

  it('receipt_credit_exhausted and receipt_credit_insufficient are 402s that quote no price', async () => {
    const small = await receiptWith(20);
    const insufficient = await post(env, CHAT, body({ max_tokens: 100 }), { authorization: `Receipt ${small}` });
    expect(insufficient.status).toBe(402);
    // "Hi" is estimated at 2 bytes + 8 + 8 = 18 input tokens: 18 µ$, and 200 µ$ for the cap.
    expect(insufficient.body).toEqual({
      error: 'receipt_credit_insufficient',
      message: 'The receipt\'s credit (0.00002 USD) cannot cover this call, which needs at least 0.000218 USD; receipts cannot be topped up',
    });
    expect(insufficient.headers.get('payment-required')).toBeNull();
    expect(insufficient.headers.get('www-authenticate')).toBeNull();
    // A call estimated at 18 + 7 × 2 = 32 µ$ whose upstream reports 18 + 7 tokens draws all of it.
    const spent = await receiptWith(32);
    env.upstream.chat({ usage: { prompt_tokens: 18, completion_tokens: 7, total_tokens: 25 } });
    try {
      expect((await post(env, CHAT, body({ max_tokens: 7 }), { authorization: `Receipt ${spent}` })).status).toBe(200);
    } finally {
      env.upstream.reset();
    }
    expect(await balanceOf(spent)).toBe(0);
    const exhausted = await post(env, CHAT, body({ max_tokens: 7 }), { authorization: `Receipt ${spent}` });
    expect(exhausted.status).toBe(402);
    expect(exhausted.body).toMatchObject({ error: 'receipt_credit_exhausted' });
  });

  it('plan_required for an agent without Credits, usage_exhausted once they run out', async () => {
    const agent = env.agents[1]!;
    const token = await env.tokenOf(agent);
    const none = await post(env, CHAT, body(), { authorization: `Bearer ${token}` });
    expect(none.status).toBe(403);
    expect(none.body).toMatchObject({ error: 'plan_required', plans: [{ id: 'credits', purchase: { url: '/storefront/plans/credits/purchase' } }] });
    await env.server.features.storefront.services!.store.purchase({
      id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId: agent.id }, kind: 'purchase',
      amountMicros: 32, paymentRef: `test:${agent.id}`, rail: 'card', detail: null, createdAtMs: Date.now(),
    });
    expect((await post(env, CHAT, body({ max_tokens: 7 }), { authorization: `Bearer ${token}` })).status).toBe(200);
    // 25 µ$ drawn, 7 µ$ left: less than the 32 µ$ this call is estimated at.
    const out = await post(env, CHAT, body({ max_tokens: 7 }), { authorization: `Bearer ${token}` });
    expect(out.status).toBe(402);
    expect(out.body).toMatchObject({
      error: 'usage_exhausted',
      message: 'Your Credits (0.000007 USD) cannot cover this call, which needs at least 0.000032 USD; extend them and retry',
      extend: { url: '/storefront/extend' },
    });
  });

  it('an MPP credential with the agent token beside it: the agent pays; without it, bearer_required', async () => {
    const agent = env.agents[0]!;
    const token = await env.tokenOf(agent);
    const paid = await post(env, CHAT, body(), { authorization: 'Payment eyJjaGFsbGVuZ2UiOnt9fQ', 'gw-agent-authorization': `Bearer ${token}` });
    expect(paid.status).toBe(200);
    const alone = await post(env, CHAT, body(), { authorization: 'Payment eyJjaGFsbGVuZ2UiOnt9fQ' });
    expect(alone.body).toMatchObject({ error: 'bearer_required' });
  });
});

describe('200 concurrent calls on one receipt', () => {
  it('never overdraw: the calls admitted are exactly those the credit covers, and the ledger adds up', async () => {
    const receipt = await receiptWith(2_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, () => post(env, CHAT, body({ max_tokens: 7 }), { authorization: `Receipt ${receipt}` })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402);
    expect(ok + refused.length).toBe(200);
    expect(ok).toBeGreaterThan(0);
    for (const r of refused) expect(['receipt_credit_insufficient', 'receipt_credit_exhausted']).toContain(r.body.error);
    const balance = await balanceOf(receipt);
    expect(balance).toBe(2_000 - ok * 25);
    expect(balance).toBeGreaterThanOrEqual(0);
    const ledger = await env.server.features.storefront.services!.store.movements('sluice', { kind: 'receipt', receiptId: receiptHash(receipt) });
    expect(ledger.filter((m) => m.kind === 'draw').map((m) => m.amountMicros)).toEqual(Array(ok).fill(-25));
  });
});

it('a second agent key set: an unknown agent is refused at the token exchange', async () => {
  const stranger = await newAgent('agt_stranger');
  const { assertion } = await import('./support.js');
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await assertion(stranger, `${env.url}/oauth2/token`) });
  const response = await fetch(`${env.url}/oauth2/token`, { method: 'POST', body: form });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ error: 'invalid_grant' });
});

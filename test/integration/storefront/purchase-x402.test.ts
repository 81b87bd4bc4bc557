/**
 * Credits bought over x402 v2 by a real client (@x402/fetch + @x402/evm on a local viem
 * account, no chain) against a fake facilitator that checks EIP-3009 signatures offline;
 * the purchase route's every validation code and payment outcome.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodeHeader, PAY_TO, post, startStorefront, type StorefrontEnv } from './support.js';
import { receiptHash } from '../../../src/domain/storefront/receipts.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront();
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.facilitator.mode = 'ok';
});

/** A paying fetch whose requests are recorded (to replay a payment). */
function payingFetch() {
  const sent: Headers[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    sent.push(new Headers(request.headers));
    return fetch(request);
  };
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  return { fetch: wrapFetchWithPayment(recording, client), sent, account };
}

const purchase = (pay: typeof fetch, amountUsd: string, headers: Record<string, string> = {}) =>
  pay(`${env.url}/plans/credits/purchase`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ amountUsd }) });

describe('the 402 quote', () => {
  it('offers x402 v2 exact on the facilitator\'s network with the USDC amount in atomic units, and has no side effects', async () => {
    const quote = await post(env, '/plans/credits/purchase', { amountUsd: '0.01' });
    expect(quote.status).toBe(402);
    expect(quote.headers.get('cache-control')).toBe('no-store');
    const required = decodeHeader(quote.headers.get('payment-required'));
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url: `${env.url}/plans/credits/purchase`, mimeType: 'application/json' },
      accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '10000', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USDC', version: '2' } }],
    });
    expect(quote.headers.get('payment-required')).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
    expect(quote.body).toMatchObject({ error: 'payment_required', quote: { planId: 'credits', amountUsd: '0.01' }, rails: ['x402', 'card'] });
    expect(await env.server.core.database.db.selectFrom('storefront_ledger').select('id').execute()).toEqual([]);
  });
});

describe('paying with @x402/fetch', () => {
  it('an anonymous purchase is settled and issues a receipt holding the credit', async () => {
    const { fetch: pay, sent, account } = payingFetch();
    const response = await purchase(pay, '1.00');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { receipt: string; access: { remainingCreditUsd: string } };
    expect(body.receipt).toMatch(/^rcpt_[A-Za-z0-9_-]{22}$/);
    expect(body.access).toEqual({ remainingCreditUsd: '1.00' });
    expect(decodeHeader(response.headers.get('payment-response'))).toMatchObject({ success: true, payer: account.address, network: 'eip155:84532', amount: '1000000' });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.get('payment-signature')).toBeTruthy();
    expect(env.facilitator.calls.map((c) => c.path).filter((p) => p !== '/supported').slice(-2)).toEqual(['/verify', '/settle']);
    const account_ = await env.server.features.storefront.services!.store.account('sluice', { kind: 'receipt', receiptId: receiptHash(body.receipt) });
    expect(account_).toMatchObject({ balanceMicros: 1_000_000, status: 'active' });
    const rows = await env.server.core.database.db.selectFrom('storefront_accounts').select('holder_id').execute();
    expect(rows.map((r) => r.holder_id)).not.toContain(body.receipt);

    // The same signed payment presented again credits nothing.
    const replay = await post(env, '/plans/credits/purchase', { amountUsd: '1.00' }, { 'payment-signature': sent[1]!.get('payment-signature')! });
    expect(replay.status).toBe(402);
    expect(replay.body).toMatchObject({ error: 'payment_consumed' });
    expect(replay.headers.get('payment-required')).toBeNull();
  });

  it('a purchase with an agent token credits the agent, and entitlements list it', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const { fetch: pay } = payingFetch();
    // The client's default spend control refuses payments over $1.
    const first = await purchase(pay, '1.00', { authorization: `Bearer ${token}` });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ access: { remainingCreditUsd: '1.00' } });
    const second = await purchase(payingFetch().fetch, '0.50', { authorization: `Bearer ${token}` });
    expect(await second.json()).toEqual({ access: { remainingCreditUsd: '1.50' } });
    const listed = await (await fetch(`${env.url}/agent/entitlements`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(listed).toMatchObject({ object: 'list', agent: { id: env.agents[0]!.id }, data: [{ planId: 'credits', kind: 'credits', remainingCreditUsd: '1.50', purchasedCreditUsd: '1.50' }] });
  });

  it('extend uses the same quote and settle path and answers the new balance', async () => {
    const token = await env.tokenOf(env.agents[1]!);
    const none = await post(env, '/extend', { amountUsd: '1.00' }, { authorization: `Bearer ${token}` });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ error: 'access_not_found', plans: [{ id: 'credits', purchase: { url: `${env.url}/plans/credits/purchase` } }] });
    await purchase(payingFetch().fetch, '1.00', { authorization: `Bearer ${token}` });
    const quote = await post(env, '/extend', { amountUsd: '0.25' }, { authorization: `Bearer ${token}` });
    expect(quote.status).toBe(402);
    expect(decodeHeader(quote.headers.get('payment-required')).accepts[0].amount).toBe('250000');
    const paid = await payingFetch().fetch(`${env.url}/extend`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ amountUsd: '0.25' }),
    });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ access: { remainingCreditUsd: '1.25' } });
    expect((await post(env, '/extend', { amountUsd: '1.00' })).body).toMatchObject({ error: 'bearer_required' });
  });
});

describe('purchase validation', () => {
  const cases: [string, unknown, number, string][] = [
    ['no amountUsd', {}, 400, 'amount_required'],
    ['a number', { amountUsd: 5 }, 400, 'invalid_request'],
    ['not a decimal', { amountUsd: '5 dollars' }, 400, 'invalid_request'],
    ['a fraction of a cent', { amountUsd: '1.005' }, 400, 'amount_not_cent_increment'],
    ['zero', { amountUsd: '0.00' }, 400, 'amount_below_minimum'],
    ['above the anonymous limit without a token', { amountUsd: '5.01' }, 401, 'bearer_required'],
    ['a card checkout without a token', { amountUsd: '1.00', checkout: true }, 401, 'bearer_required'],
  ];
  it.each(cases)('%s', async (_name, body, status, code) => {
    const response = await post(env, '/plans/credits/purchase', body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ error: code });
    expect(response.headers.get('payment-required')).toBeNull();
  });

  it('bearer_required carries the hint and the auth recipe', async () => {
    const response = await post(env, '/plans/credits/purchase', { amountUsd: '9.00' });
    expect(response.body).toMatchObject({
      error: 'bearer_required',
      hint: expect.any(String),
      auth: { recipe: { tokenUrl: `${env.url}/oauth2/token` }, presentation: { scheme: 'Bearer', standardHeader: 'Authorization', alternateHeader: 'GW-Agent-Authorization' } },
    });
  });

  it('trailing zeros past the cents are whole cents', async () => {
    const response = await post(env, '/plans/credits/purchase', { amountUsd: '0.0100' });
    expect(response.status).toBe(402);
  });

  it('amount_below_card_minimum for a card checkout under 0.50', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const response = await post(env, '/plans/credits/purchase', { amountUsd: '0.49', checkout: true }, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'amount_below_card_minimum' });
  });

  it('plan_not_found, and invalid JSON', async () => {
    const missing = await post(env, '/plans/gold/purchase', { amountUsd: '1.00' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'plan_not_found' });
    const response = await fetch(`${env.url}/plans/credits/purchase`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amountUsd":' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('payment outcomes', () => {
  /** A signed PAYMENT-SIGNATURE for `amountUsd`, not yet presented. */
  async function signedPayment(amountUsd: string) {
    const { fetch: pay, sent } = payingFetch();
    env.facilitator.mode = 'error-500';
    await purchase(pay, amountUsd);
    env.facilitator.mode = 'ok';
    return sent[1]!.get('payment-signature')!;
  }

  it('a facilitator 5xx, and a facilitator that never answers, are payment_provider_unavailable', async () => {
    const signature = await signedPayment('0.10');
    env.facilitator.mode = 'error-500';
    const down = await post(env, '/plans/credits/purchase', { amountUsd: '0.10' }, { 'payment-signature': signature });
    expect(down.status).toBe(402);
    expect(down.body).toMatchObject({ error: 'payment_provider_unavailable' });
    env.facilitator.mode = 'timeout';
    const slow = await post(env, '/plans/credits/purchase', { amountUsd: '0.10' }, { 'payment-signature': signature });
    expect(slow.body).toMatchObject({ error: 'payment_provider_unavailable' });
    // Retried unchanged once the facilitator is back, the same payment settles.
    env.facilitator.mode = 'ok';
    const retried = await post(env, '/plans/credits/purchase', { amountUsd: '0.10' }, { 'payment-signature': signature });
    expect(retried.status).toBe(200);
    expect(retried.body.access).toEqual({ remainingCreditUsd: '0.10' });
  });

  it('verify saying invalid, and a failed settlement, are settlement_failed with the reason', async () => {
    const signature = await signedPayment('0.20');
    env.facilitator.mode = 'verify-invalid';
    const invalid = await post(env, '/plans/credits/purchase', { amountUsd: '0.20' }, { 'payment-signature': signature });
    expect(invalid.body).toMatchObject({ error: 'settlement_failed', settlementReason: 'insufficient_funds' });
    env.facilitator.mode = 'settle-fail';
    const failed = await post(env, '/plans/credits/purchase', { amountUsd: '0.20' }, { 'payment-signature': signature });
    expect(failed.status).toBe(402);
    expect(failed.body).toMatchObject({ error: 'settlement_failed', settlementReason: 'unexpected_settle_error' });
  });

  it('a payment for another amount matches no requirement', async () => {
    const signature = await signedPayment('0.30');
    const other = await post(env, '/plans/credits/purchase', { amountUsd: '0.40' }, { 'payment-signature': signature });
    expect(other.body).toMatchObject({ error: 'settlement_failed', settlementReason: 'invalid_payment_requirements' });
  });

  it('a tampered signature is refused by the facilitator\'s check', async () => {
    const signature = await signedPayment('0.30');
    const payload = decodeHeader(signature);
    payload.payload.authorization.to = '0x0000000000000000000000000000000000000001';
    payload.accepted.payTo = PAY_TO;
    const forged = Buffer.from(JSON.stringify(payload)).toString('base64');
    const response = await post(env, '/plans/credits/purchase', { amountUsd: '0.30' }, { 'payment-signature': forged });
    expect(response.body).toMatchObject({ error: 'settlement_failed', settlementReason: 'invalid_exact_evm_payload_recipient_mismatch' });
  });

  it('a PAYMENT-SIGNATURE that is not base64 JSON is invalid_request', async () => {
    const response = await post(env, '/plans/credits/purchase', { amountUsd: '0.30' }, { 'payment-signature': '%%%not-base64' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'invalid_request' });
  });
});

describe('browsers', () => {
  it('a preflight allows PAYMENT-SIGNATURE, and the quote exposes its payment headers', async () => {
    const preflight = await fetch(`${env.url}/plans/credits/purchase`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'payment-signature' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('payment-signature');
    const quote = await post(env, '/plans/credits/purchase', { amountUsd: '0.01' }, { origin: 'https://agent.example' });
    expect(quote.headers.get('access-control-expose-headers')).toContain('payment-required');
  });
});

describe('sellers by host', () => {
  it('an unmapped host is 404 seller_not_found; a mapped one is served', async () => {
    const { startStorefront: start } = await import('./support.js');
    const mapped = await start({ yamlExtra: '  seller: { id: acme, name: Acme, hosts: [agents.acme.test] }\n' });
    try {
      const unmapped = await fetch(`${mapped.url}/manifest.json`);
      expect(unmapped.status).toBe(404);
      expect(await unmapped.json()).toMatchObject({ error: 'seller_not_found' });
      const { request } = await import('undici');
      const served = await request(`${mapped.url}/manifest.json`, { headers: { host: 'agents.acme.test' } });
      expect(served.statusCode).toBe(200);
      expect(await served.body.json()).toMatchObject({ seller: { id: 'acme', name: 'Acme' }, plans: [{ id: 'credits', purchase: { url: 'http://agents.acme.test/storefront/plans/credits/purchase', minimumUsd: '0.01', cardMinimumUsd: '0.50', rails: ['x402', 'card'] } }] });
    } finally {
      await mapped.close();
    }
  });
});

describe('the manifest', () => {
  it('lists the seller, plans with purchase URLs, minimums and rails, model prices and the token endpoint', async () => {
    const manifest = await (await fetch(`${env.url}/manifest.json`)).json();
    expect(manifest).toMatchObject({
      seller: { id: 'sluice', name: 'Sluice' },
      plans: [{
        id: 'credits', kind: 'credits',
        prices: { 'gpt-oss-120b': { inputPer1M: '1', outputPer1M: '2' } },
        purchase: { url: `${env.url}/plans/credits/purchase`, method: 'POST', minimumUsd: '0.01', cardMinimumUsd: '0.50', rails: ['x402', 'card'] },
      }],
      auth: { tokenUrl: `${env.url}/oauth2/token`, grantTypes: ['urn:ietf:params:oauth:grant-type:jwt-bearer'] },
    });
  });
});

describe('a facilitator that does not list the network', () => {
  it('is not offered in the manifest or the quote', async () => {
    const { startStorefront: start } = await import('./support.js');
    const other = await start({ env: { STOREFRONT_NETWORK: 'eip155:8453' } });
    try {
      const manifest = (await (await fetch(`${other.url}/manifest.json`)).json()) as { plans: { purchase: { rails: string[] } }[] };
      expect(manifest.plans[0]!.purchase.rails).toEqual(['card']);
      const quote = await post(other, '/plans/credits/purchase', { amountUsd: '1.00' });
      expect(quote.status).toBe(402);
      expect(quote.headers.get('payment-required')).toBeNull();
      expect(quote.body.rails).toEqual(['card']);
    } finally {
      await other.close();
    }
  });
});

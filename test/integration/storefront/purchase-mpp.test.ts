/** Credits bought over MPP by an mppx client against the combined 402 (the built-in fake/charge method). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Challenge, Credential, Method, Receipt } from 'mppx';
import { Mppx } from 'mppx/client';
import { fakeCharge } from '../../../src/adapters/payments/mpp-fake-method.js';
import { post, startStorefront, type StorefrontEnv } from './support.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({
    yamlExtra: '  mpp: { realm: sluice.test, method: fake }\n',
    env: { STOREFRONT_MPP_SECRET_KEY: 'a-test-secret-of-at-least-32-bytes-long' },
  });
});
afterAll(async () => env?.close());

function mppClient() {
  const sent: Headers[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    sent.push(new Headers(request.headers));
    return fetch(request);
  };
  const method = Method.toClient(fakeCharge, {
    createCredential: async ({ challenge }) => Credential.serialize(Credential.from({ challenge, payload: { token: 'test-token' } })),
  });
  const client = Mppx.create({ methods: [method], polyfill: false, fetch: recording });
  return { client, sent };
}

const purchaseInit = (amountUsd: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ amountUsd }),
});

describe('MPP', () => {
  it('the 402 carries the Payment challenge beside the x402 offer', async () => {
    const quote = await post(env, '/plans/credits/purchase', { amountUsd: '1.00' });
    expect(quote.status).toBe(402);
    const challenge = quote.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Payment /);
    expect(challenge).toContain('realm="sluice.test"');
    expect(challenge).toContain('method="fake"');
    expect(challenge).toContain('intent="charge"');
    const request = /request="([^"]+)"/.exec(challenge)![1]!;
    expect(JSON.parse(Buffer.from(request, 'base64url').toString())).toMatchObject({ amount: '1.00', currency: 'usd' });
    expect(quote.headers.get('payment-required')).toBeTruthy();
    expect(quote.body.rails).toEqual(['x402', 'mpp', 'card']);
  });

  it('an anonymous mppx purchase gets a receipt and Payment-Receipt; the credential replayed is payment_consumed', async () => {
    const { client, sent } = mppClient();
    const response = await client.fetch(`${env.url}/plans/credits/purchase`, purchaseInit('0.50'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { receipt: string; access: unknown };
    expect(body.receipt).toMatch(/^rcpt_/);
    expect(body.access).toEqual({ remainingCreditUsd: '0.50' });
    expect(Receipt.fromResponse(response)).toMatchObject({ method: 'fake', status: 'success' });
    const credential = sent.at(-1)!.get('authorization')!;
    expect(credential).toMatch(/^Payment /);
    const replay = await post(env, '/plans/credits/purchase', { amountUsd: '0.50' }, { authorization: credential });
    expect(replay.status).toBe(402);
    expect(replay.body).toMatchObject({ error: 'payment_consumed' });

    const chat = await post(env, '/gateway/v1/chat/completions', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Receipt ${body.receipt}` });
    expect(chat.status).toBe(200);
  });

  it('with GW-Agent-Authorization the agent is credited, and then calls with its MPP credential and token', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const { client, sent } = mppClient();
    const response = await client.fetch(`${env.url}/plans/credits/purchase`, purchaseInit('0.75', { 'gw-agent-authorization': `Bearer ${token}` }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ access: { remainingCreditUsd: '0.75' } });
    expect(sent.at(-1)!.get('gw-agent-authorization')).toBe(`Bearer ${token}`);
    const chat = await post(env, '/gateway/v1/chat/completions', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] }, {
      authorization: sent.at(-1)!.get('authorization')!,
      'gw-agent-authorization': `Bearer ${token}`,
    });
    expect(chat.status).toBe(200);
  });

  it('a credential for another amount does not settle (and is not consumed)', async () => {
    const quote = await fetch(`${env.url}/plans/credits/purchase`, purchaseInit('0.20'));
    const challenge = Challenge.fromResponse(quote);
    const credential = Credential.serialize(Credential.from({ challenge, payload: { token: 'test-token' } }));
    const other = await post(env, '/plans/credits/purchase', { amountUsd: '0.30' }, { authorization: credential });
    expect(other.status).toBe(402);
    expect(other.body).toMatchObject({ error: 'settlement_failed', settlementReason: expect.any(String) });
    const right = await post(env, '/plans/credits/purchase', { amountUsd: '0.20' }, { authorization: credential });
    expect(right.status).toBe(200);
    expect(right.headers.get('payment-receipt')).toBeTruthy();
  });
});

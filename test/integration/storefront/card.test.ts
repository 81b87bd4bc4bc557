/** The card rail with the built-in fake provider: checkout, the local page's Pay and Decline, every checkout state at the retry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startStorefront, type StorefrontEnv } from './support.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({ agents: 2 });
});
afterAll(async () => env?.close());

async function startCheckout(token: string, amountUsd = '1.00') {
  const quote = await post(env, '/plans/credits/purchase', { amountUsd, checkout: true }, { authorization: `Bearer ${token}` });
  expect(quote.status).toBe(402);
  return quote.body.card as { checkoutId: string; checkoutUrl: string; statusUrl: string };
}

async function press(checkoutUrl: string, action: 'pay' | 'decline', csrf?: string) {
  const page = await (await fetch(checkoutUrl)).text();
  const token = csrf ?? /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  return fetch(`${checkoutUrl}/${action}`, { method: 'POST', body: new URLSearchParams({ csrf: token }) });
}

const retry = (token: string, checkoutId: string, amountUsd = '1.00') =>
  post(env, '/plans/credits/purchase', { amountUsd, paymentReference: checkoutId }, { authorization: `Bearer ${token}` });

describe('the fake card checkout', () => {
  it('is paid on its page and credits the agent once', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const card = await startCheckout(token);
    expect(card.checkoutUrl).toBe(`${env.url}/checkout/${card.checkoutId}`);
    expect(card.statusUrl).toBe(`${env.url}/checkout/${card.checkoutId}/status`);
    expect(await (await fetch(card.statusUrl)).json()).toEqual({ checkoutId: card.checkoutId, status: 'open' });

    const unpaid = await retry(token, card.checkoutId);
    expect(unpaid.status).toBe(402);
    expect(unpaid.body).toMatchObject({ error: 'payment_incomplete' });

    const page = await fetch(card.checkoutUrl);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('Pay (test)');
    const forged = await press(card.checkoutUrl, 'pay', 'x'.repeat(32));
    expect(forged.status).toBe(403);
    expect(await (await fetch(card.statusUrl)).json()).toMatchObject({ status: 'open' });

    const paid = await press(card.checkoutUrl, 'pay');
    expect(paid.status).toBe(200);
    expect(await paid.text()).toContain('paid');
    expect(await (await fetch(card.statusUrl)).json()).toMatchObject({ status: 'paid' });

    const credited = await retry(token, card.checkoutId);
    expect(credited.status).toBe(200);
    expect(credited.body).toEqual({ access: { remainingCreditUsd: '1.00' } });
    expect((await retry(token, card.checkoutId)).body).toMatchObject({ error: 'payment_consumed' });

    const chat = await post(env, '/gateway/v1/chat/completions', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${token}` });
    expect(chat.status).toBe(200);
  });

  it('payment_unknown for another agent\'s checkout, another amount, or no checkout at all', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const card = await startCheckout(token);
    await press(card.checkoutUrl, 'pay');
    const other = await env.tokenOf(env.agents[1]!);
    expect((await retry(other, card.checkoutId)).body).toMatchObject({ error: 'payment_unknown' });
    expect((await retry(token, card.checkoutId, '2.00')).body).toMatchObject({ error: 'payment_unknown' });
    expect((await retry(token, 'chk_nothing')).body).toMatchObject({ error: 'payment_unknown' });
  });

  it('declined, expired and refunded checkouts', async () => {
    const token = await env.tokenOf(env.agents[1]!);
    const declined = await startCheckout(token);
    expect((await press(declined.checkoutUrl, 'decline')).status).toBe(200);
    expect((await retry(token, declined.checkoutId)).body).toMatchObject({ error: 'payment_failed' });

    const fake = env.server.features.storefront.services!.fakeCard!;
    const expired = await startCheckout(token);
    fake.force(expired.checkoutId, 'expired');
    expect((await retry(token, expired.checkoutId)).body).toMatchObject({ error: 'payment_released' });
    const refunded = await startCheckout(token);
    fake.force(refunded.checkoutId, 'refunded');
    const answer = await retry(token, refunded.checkoutId);
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ error: 'payment_refunded' });
  });
});

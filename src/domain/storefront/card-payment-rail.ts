/**
 * Card payments as a purchase rail: `checkout: true` with an agent token starts a hosted
 * checkout (the only side effect a quote may have); the retry names it in
 * `paymentReference`, and a paid, unconsumed checkout of the same agent, plan and amount
 * is credited once.
 */
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { CardRail, CheckoutStatus } from './card-rail.port.js';
import type { PaymentAttempt, PaymentRail, PreparedPayment, Quote, RailOffer } from './payment-rail.port.js';
import { paymentError, providerUnavailable } from '../shared/storefront-errors.js';
import type { StorefrontStore } from './storefront.types.js';

const TERMINAL: Record<Exclude<CheckoutStatus, 'paid'>, [string, string]> = {
  open: ['payment_incomplete', 'The checkout is not paid yet; poll statusUrl, then retry'],
  expired: ['payment_released', 'The checkout expired without payment'],
  failed: ['payment_failed', 'The card payment was declined'],
  refunded: ['payment_refunded', 'The card payment was refunded'],
};

export const checkoutUrls = (storefrontUrl: string, checkoutId: string) => ({
  checkoutUrl: `${storefrontUrl}/checkout/${checkoutId}`,
  statusUrl: `${storefrontUrl}/checkout/${checkoutId}/status`,
});

export class CardPaymentRail implements PaymentRail {
  readonly id = 'card' as const;

  constructor(
    private readonly card: CardRail,
    private readonly store: StorefrontStore,
    private readonly clock: Clock,
  ) {}

  async offer(quote: Quote): Promise<RailOffer | null> {
    if (!quote.checkout || quote.agentId === null) {
      return { body: { card: { checkout: 'retry with "checkout": true and an agent token for a hosted checkout page', minimumUsd: '0.50' } } };
    }
    const purchaseId = newId('pur_');
    let created;
    try {
      created = await this.card.createCheckout({
        purchaseId,
        amountCents: quote.amountMicros / 10_000,
        currency: 'usd',
        agentId: quote.agentId,
        successUrl: `${quote.storefrontUrl}/checkout/done`,
        cancelUrl: `${quote.storefrontUrl}/checkout/done`,
        description: quote.description,
      });
    } catch {
      return null;
    }
    await this.store.insertCheckout({
      id: created.checkoutId,
      sellerId: quote.sellerId,
      agentId: quote.agentId,
      planId: quote.planId,
      amountMicros: quote.amountMicros,
      provider: this.card.id,
      createdAtMs: this.clock.nowMs(),
    });
    const urls = this.card.id === 'fake' ? checkoutUrls(quote.storefrontUrl, created.checkoutId) : { checkoutUrl: created.url, statusUrl: checkoutUrls(quote.storefrontUrl, created.checkoutId).statusUrl };
    return { body: { quote: { planId: quote.planId, amountUsd: (quote.amountMicros / 1e6).toFixed(2), purchaseId }, card: { checkoutId: created.checkoutId, ...urls } } };
  }

  presented(attempt: PaymentAttempt, quote: Quote): PreparedPayment | null {
    const reference = attempt.paymentReference;
    if (reference === undefined) return null;
    return { paymentRef: `card:${reference}`, complete: () => this.#settle(reference, quote) };
  }

  async #settle(reference: string, quote: Quote) {
    const checkout = /^[A-Za-z0-9_-]{1,128}$/.test(reference) ? await this.store.checkout(reference) : undefined;
    const ours = checkout && checkout.sellerId === quote.sellerId && checkout.agentId === quote.agentId &&
      checkout.planId === quote.planId && checkout.amountMicros === quote.amountMicros;
    if (!ours) throw paymentError('payment_unknown', 'The payment reference matches no payment of this caller for this purchase');
    let status: CheckoutStatus | null;
    try {
      status = await this.card.getStatus(reference);
    } catch {
      throw providerUnavailable('the card provider');
    }
    if (status === null) throw paymentError('payment_unknown', 'The payment reference matches no payment of this caller');
    if (status !== 'paid') {
      const [code, message] = TERMINAL[status];
      throw paymentError(code, message, code === 'payment_incomplete' ? { statusUrl: `/checkout/${reference}/status` } : {});
    }
    return { headers: {}, detail: reference };
  }
}

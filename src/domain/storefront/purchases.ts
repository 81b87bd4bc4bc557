/**
 * Credits purchases and extensions: validate, quote every rail at once (a 402 with no
 * side effects), or settle the one payment the retry presents and grant its credit in
 * the same transaction that records the payment's reference.
 */
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { CARD_MINIMUM_MICROS, formatUsd, parseAmountUsd } from './amounts.js';
import type { PaymentAttempt, PaymentRail, Quote } from './payment-rail.port.js';
import { newReceiptId, receiptHash } from './receipts.js';
import { bearerRequired } from './credentials.js';
import { paymentConsumed, planNotFound, providerUnavailable, storefrontError } from '../shared/storefront-errors.js';
import type { CreditHolder, StorefrontStore } from './storefront.types.js';
import type { Seller } from './sellers.js';

export interface PurchaseRequest {
  seller: Seller;
  planId: string;
  body: { amountUsd?: unknown; checkout?: unknown };
  agentId: string | null;
  resourceUrl: string;
  storefrontUrl: string;
  attempt: PaymentAttempt;
}

export interface PurchaseResult {
  headers: Record<string, string>;
  body: { receipt?: string; access: { remainingCreditUsd: string } };
}

export class PurchaseService {
  constructor(
    private readonly store: StorefrontStore,
    private readonly rails: readonly PaymentRail[],
    private readonly clock: Clock,
    private readonly anonymousLimitMicros: number,
  ) {}

  /** The rails that can take a payment now, for the catalog. */
  async availableRails(): Promise<string[]> {
    const ready = await Promise.all(this.rails.map(async (rail) => ((await rail.available?.()) ?? true ? rail.id : null)));
    return ready.filter((id): id is NonNullable<typeof id> => id !== null);
  }

  async purchase(request: PurchaseRequest): Promise<PurchaseResult> {
    const quote = this.#quoteOf(request);
    for (const rail of this.rails) {
      const prepared = await rail.presented(request.attempt, quote);
      if (!prepared) continue;
      if (await this.store.paymentRecorded(prepared.paymentRef)) throw paymentConsumed();
      const settled = await prepared.complete();
      return this.#grant(quote, rail.id, prepared.paymentRef, settled);
    }
    throw await this.#priceQuote(quote);
  }

  /** The checks that come before any price: plan, amount, minimums, who may buy. */
  #quoteOf(request: PurchaseRequest): Quote {
    const plan = request.seller.plans.get(request.planId);
    if (!plan) throw planNotFound(request.planId);
    const body = request.body;
    const amountMicros = parseAmountUsd(body.amountUsd);
    if (amountMicros < plan.minimumMicros) {
      throw storefrontError('invalid_request', 'amount_below_minimum', `amountUsd must be at least ${formatUsd(plan.minimumMicros)}`, {
        minimumUsd: formatUsd(plan.minimumMicros),
      });
    }
    const checkout = body.checkout === true;
    const byCard = checkout || request.attempt.paymentReference !== undefined;
    if (byCard && amountMicros < CARD_MINIMUM_MICROS) {
      throw storefrontError('invalid_request', 'amount_below_card_minimum', `Card purchases start at ${formatUsd(CARD_MINIMUM_MICROS)}`, {
        cardMinimumUsd: formatUsd(CARD_MINIMUM_MICROS),
      });
    }
    if (request.agentId === null && (checkout || amountMicros > this.anonymousLimitMicros)) {
      throw bearerRequired(
        checkout
          ? 'A card checkout needs an agent token'
          : `Purchases above ${formatUsd(this.anonymousLimitMicros)} need an agent token`,
        `${request.storefrontUrl}/oauth2/token`,
      );
    }
    return {
      sellerId: request.seller.id,
      planId: plan.id,
      description: `${request.seller.name} ${plan.description}`.slice(0, 100),
      amountMicros,
      agentId: request.agentId,
      resourceUrl: request.resourceUrl,
      storefrontUrl: request.storefrontUrl,
      checkout,
    };
  }

  /** The 402 offering every rail that can take a payment now. */
  async #priceQuote(quote: Quote) {
    const offers = await Promise.all(this.rails.map(async (rail) => ({ id: rail.id, offer: await rail.offer(quote) })));
    const offered = offers.filter((o) => o.offer !== null);
    if (offered.length === 0) return providerUnavailable('no payment rail is reachable');
    const headers: Record<string, string> = { 'cache-control': 'no-store' };
    let body: Record<string, unknown> = {
      quote: { planId: quote.planId, amountUsd: formatUsd(quote.amountMicros) },
      rails: offered.map((o) => o.id),
    };
    for (const { offer } of offered) {
      Object.assign(headers, offer!.headers);
      body = { ...body, ...offer!.body };
    }
    return storefrontError('payment_required', 'payment_required', 'Pay the quote on one rail and retry the same request once', body, headers);
  }

  async #grant(quote: Quote, rail: PaymentRail['id'], paymentRef: string, settled: { headers: Record<string, string>; detail: string | null }): Promise<PurchaseResult> {
    const receipt = quote.agentId === null ? newReceiptId() : null;
    const holder: CreditHolder = receipt ? { kind: 'receipt', receiptId: receiptHash(receipt) } : { kind: 'agent', agentId: quote.agentId! };
    const outcome = await this.store.purchase({
      id: newId('mov_'),
      sellerId: quote.sellerId,
      holder,
      kind: 'purchase',
      amountMicros: quote.amountMicros,
      paymentRef,
      rail,
      detail: settled.detail,
      createdAtMs: this.clock.nowMs(),
    });
    if (!outcome.credited) throw paymentConsumed();
    const access = { remainingCreditUsd: formatUsd(outcome.account.balanceMicros) };
    return { headers: settled.headers, body: receipt ? { receipt, access } : { access } };
  }
}

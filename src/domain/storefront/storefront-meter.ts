/**
 * The meter of storefront calls: paid from an agent's Credits or a receipt's credit on
 * one seller's ledger. As on /v1, a call holds its worst-case cost in the shared
 * ReservationBook (keyed by seller and holder) until it ends, so concurrent calls cannot
 * overdraw; when the balance cannot cover the worst case of a call known to have set no
 * output cap (`outputCapExplicit === false`), the call runs with a lower cap that it can
 * pay for instead of being refused. Settling writes the call's usage record (under the
 * seller's tenant project, with the agent or receipt as payer); the ledger draw is that
 * payer's debit, in the record's transaction. Then the hold is released.
 */
import { payerRef, type Principal } from '../identity/caller.js';
import type { UsageRecord } from '../billing/usage.types.js';
import type { Admission, Meter, MeteredCall, Settlement, SettledUsage } from '../billing/meter.js';
import type { Hold, ReservationBook } from '../billing/reservations.js';
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { costMicros, type TokenPrice } from '../shared/money.js';
import { formatUsd } from './amounts.js';
import { invalidReceipt, paymentError, storefrontError } from './storefront-errors.js';
import type { CreditHolder, StorefrontStore } from './storefront.types.js';
import type { Seller } from './sellers.js';

export const REMAINING_CREDIT_HEADER = 'x-credit-remaining-usd';
import { OUTPUT_CAP_HEADER } from '../billing/credit-meter.js';

export { OUTPUT_CAP_HEADER };

export interface StorefrontMeterDeps {
  store: StorefrontStore;
  reservations: ReservationBook;
  priceOf: (model: string) => TokenPrice;
  clock: Clock;
  /** Writes a usage record with its payer's debit (the ledger draw) in one transaction; resolves once committed. */
  usage: { write(record: UsageRecord): Promise<void> };
  /** The storefront's path (its prefix), for links in refusals (plans, extend). */
  basePath: string;
}

function holderOf(principal: Principal): CreditHolder {
  const { payer } = principal;
  if (payer.kind === 'agent' || payer.kind === 'receipt') return payer;
  throw new AppError('internal', `the storefront meter cannot charge a ${payer.kind}`);
}

export class StorefrontMeter implements Meter {
  constructor(
    private readonly seller: Seller,
    private readonly deps: StorefrontMeterDeps,
  ) {}

  async admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const holder = holderOf(principal);
    const key = `${this.seller.id}|${holder.kind}|${holder.kind === 'agent' ? holder.agentId : holder.receiptId}`;
    const { reservations, store } = this.deps;
    const epoch = reservations.beginRead();
    try {
      const now = store.accountNow?.(this.seller.id, holder);
      const account = now ? now.account : await store.account(this.seller.id, holder);
      if (!account || account.status !== 'active') throw holder.kind === 'receipt' ? invalidReceipt() : this.#planRequired();
      const price = this.deps.priceOf(call.model);
      const estimate = call.estimateMicros ?? costMicros(price, call.inputTokens, call.maxOutputTokens);
      let hold = reservations.tryHold(key, account.balanceMicros, estimate, epoch);
      let outputCap: number | undefined;
      if (!hold && call.outputCapExplicit === false && call.estimateMicros === undefined && price.outputPerMillionUsd > 0) {
        const available = account.balanceMicros - reservations.heldFor(key) - costMicros(price, call.inputTokens, 0);
        const cap = Math.min(call.maxOutputTokens - 1, Math.floor(available / price.outputPerMillionUsd));
        if (cap >= 1) {
          hold = reservations.tryHold(key, account.balanceMicros, costMicros(price, call.inputTokens, cap), epoch);
          outputCap = hold ? cap : undefined;
        }
      }
      if (!hold) throw this.#outOfCredit(holder, account.balanceMicros - reservations.heldFor(key));
      return new StorefrontAdmission(this.seller.id, principal, holder, call, hold, price, this.deps, outputCap);
    } finally {
      reservations.endRead(epoch);
    }
  }

  #planRequired() {
    const base = this.deps.basePath;
    return storefrontError('permission', 'plan_required', 'No plan of yours covers this call; buy Credits first', {
      plans: [...this.seller.plans.values()].map((p) => ({ id: p.id, kind: p.kind, purchase: { url: `${base}/plans/${p.id}/purchase`, method: 'POST' } })),
    });
  }

  #outOfCredit(holder: CreditHolder, availableMicros: number) {
    if (holder.kind === 'receipt') {
      return availableMicros <= 0
        ? paymentError('receipt_credit_exhausted', 'The receipt has no credit left; receipts cannot be topped up')
        : paymentError('receipt_credit_insufficient', 'The receipt\'s credit cannot cover this call; receipts cannot be topped up');
    }
    return paymentError('usage_exhausted', 'Your Credits cannot cover this call; extend them and retry', {
      extend: { url: `${this.deps.basePath}/extend`, method: 'POST' },
    });
  }
}

class StorefrontAdmission implements Admission {
  #done = false;
  readonly headers?: Readonly<Record<string, string>>;

  constructor(
    private readonly sellerId: string,
    private readonly principal: Principal,
    private readonly holder: CreditHolder,
    private readonly call: MeteredCall,
    private readonly hold: Hold,
    private readonly price: TokenPrice,
    private readonly deps: StorefrontMeterDeps,
    readonly outputCap?: number,
  ) {
    if (outputCap !== undefined) this.headers = { [OUTPUT_CAP_HEADER]: String(outputCap) };
  }

  async settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) throw new AppError('internal', 'a metered call was settled twice');
    this.#done = true;
    const record: UsageRecord = {
      id: newId('usage_'),
      projectId: this.principal.projectId,
      keyId: null,
      payer: payerRef(this.principal.payer),
      model: usage.model ?? this.call.model,
      route: this.call.route,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      // A fallback that served is billed at its own price.
      costMicros: usage.costMicros ?? costMicros(usage.model ? this.deps.priceOf(usage.model) : this.price, usage.inputTokens, usage.outputTokens),
      requestId: this.call.requestId,
      status: usage.status,
      createdAtMs: this.deps.clock.nowMs(),
    };
    if (usage.deployment !== undefined) record.deployment = usage.deployment;
    let balance: number;
    try {
      await this.deps.usage.write(record);
      balance = await this.#balance();
    } catch (err) {
      this.hold.release();
      throw err;
    }
    this.hold.settled();
    return { record, headers: { [REMAINING_CREDIT_HEADER]: formatUsd(balance) } };
  }

  /** The holder's balance just after the draw (the account is read once it is committed). */
  async #balance(): Promise<number> {
    const { store } = this.deps;
    const now = store.accountNow?.(this.sellerId, this.holder);
    const account = now ? now.account : await store.account(this.sellerId, this.holder);
    return account?.balanceMicros ?? 0;
  }

  release(): void {
    this.#done = true;
    this.hold.release();
  }
}

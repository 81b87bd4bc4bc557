/**
 * The meter of storefront calls: paid from an agent's Credits or a receipt's credit on
 * one seller's ledger. The same hold rules as /v1 (credit-meter.ts): a call holds its
 * worst-case cost in the shared ReservationBook (keyed by seller and holder) until it
 * ends, so concurrent calls cannot overdraw; a call that set no output cap and whose worst
 * case does not fit holds the default output allowance, or a lower cap it can pay for,
 * and runs with it; a call the balance pays for but whose credit other calls of the same
 * holder hold waits for them (up to the policy's holdWaitMs); it is refused at once only
 * when the balance itself cannot pay for it. Settling writes the call's usage record
 * (under the seller's tenant project, with the agent or receipt as payer); the ledger
 * draw is that payer's debit, in the record's transaction. Then the hold is released.
 */
import { payerRef, type Principal } from '../identity/caller.js';
import type { UsageRecord } from '../billing/usage.types.js';
import { HeldByOtherCalls, waitingForHeldCredit, type Admission, type Meter, type MeteredCall, type Settlement, type SettledUsage } from '../billing/meter.js';
import type { Hold, ReservationBook } from '../billing/reservations.js';
import { CreditFit } from '../billing/credit-fit.js';
import { InputOverheads } from '../billing/input-overhead.js';
import { OUTPUT_CAP_HEADER, wantedFrom, type CreditGrant, type HoldPolicy } from '../billing/credit-meter.js';
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { costMicros, type TokenPrice } from '../shared/money.js';
import { formatUsd } from './amounts.js';
import { invalidReceipt, paymentError, storefrontError } from '../shared/storefront-errors.js';
import type { CreditAccount, CreditHolder, StorefrontStore } from './storefront.types.js';
import type { Seller } from './sellers.js';
import { labelRecord } from '../billing/call-tags.js';

export const REMAINING_CREDIT_HEADER = 'x-credit-remaining-usd';

export { OUTPUT_CAP_HEADER };

export interface StorefrontMeterDeps {
  store: StorefrontStore;
  reservations: ReservationBook;
  priceOf: (model: string) => TokenPrice;
  clock: Clock;
  /**
   * Writes a usage record with its payer's debit (the ledger draw) in one transaction;
   * resolves once committed. `commits` counts this process's committed usage transactions.
   */
  usage: { write(record: UsageRecord): Promise<void>; readonly commits: number };
  /** The storefront's path (its prefix), for links in refusals (plans, extend). */
  basePath: string;
  /** How calls hold credit (the same settings as /v1's). */
  policy: HoldPolicy;
}

function holderOf(principal: Principal): CreditHolder {
  const { payer } = principal;
  if (payer.kind === 'agent' || payer.kind === 'receipt') return payer;
  throw new AppError('internal', `the storefront meter cannot charge a ${payer.kind}`);
}

/** The holder's key in the reservation book and the account reads. */
const holderKeyOf = (sellerId: string, holder: CreditHolder) => `${sellerId}|${holder.kind}|${holder.kind === 'agent' ? holder.agentId : holder.receiptId}`;

const usd = (micros: number) => `${formatUsd(Math.max(0, micros))} USD`;

/** An account as read when this process had committed `commits` usage transactions. */
interface ReadAccount {
  account: CreditAccount | undefined;
  commits: number;
}

/**
 * Account reads for admission and for the balance a settled call reports. When the store
 * can answer at once (the embedded database), the first read of a holder in a turn
 * queries it and the turn's later reads share that answer, until the turn ends or a
 * settled call of that holder, whose draw was committed after the read, reads it again
 * (before giving its hold back, so no admission sees neither its hold nor its draw), as
 * /v1's balance reads do. Otherwise the reads of one holder requested during one turn
 * share one query, issued after all of them were requested (so none sees an older
 * account than a read of its own would). A burst's calls waiting for credit all retry
 * when a hold is given back: one query, not one per call.
 */
class AccountReads {
  readonly #pending = new Map<string, Promise<CreditAccount | undefined>>();
  readonly #thisTurn = new Map<string, ReadAccount>();
  readonly #endTurn = () => this.#thisTurn.clear();

  constructor(
    private readonly store: StorefrontStore,
    private readonly usage: StorefrontMeterDeps['usage'],
  ) {}

  /** The account, reflecting at least the first `commits` usage transactions of this process. */
  read(key: string, sellerId: string, holder: CreditHolder, commits = 0): Promise<CreditAccount | undefined> {
    const cached = this.#thisTurn.get(key);
    if (cached) {
      if (cached.commits >= commits) return Promise.resolve(cached.account);
      this.#thisTurn.delete(key);
    }
    const seen = this.usage.commits;
    const now = this.store.accountNow?.(sellerId, holder);
    if (now) {
      if (this.#thisTurn.size === 0) setImmediate(this.#endTurn);
      this.#thisTurn.set(key, { account: now.account, commits: seen });
      return Promise.resolve(now.account);
    }
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.#pending.delete(key);
        return this.store.account(sellerId, holder);
      });
      this.#pending.set(key, pending);
    }
    return pending;
  }
}

export class StorefrontMeter implements Meter {
  readonly #accounts: AccountReads;
  readonly #overheads = new InputOverheads();

  constructor(
    private readonly seller: Seller,
    private readonly deps: StorefrontMeterDeps,
  ) {
    this.#accounts = new AccountReads(deps.store, deps.usage);
  }

  async admit(principal: Principal, original: MeteredCall): Promise<Admission> {
    const holder = holderOf(principal);
    const call = this.#overheads.estimateOf(original);
    const price = this.deps.priceOf(call.model);
    const fit = new CreditFit(call, (input, output) => costMicros(price, input, output), this.deps.policy);
    const grant = await waitingForHeldCredit(() => this.#hold(holder, fit), this.deps.policy.holdWaitMs);
    const settling = { sellerId: this.seller.id, holder, accounts: this.#accounts };
    return new StorefrontAdmission(settling, principal, call, grant.hold, price, this.#overheads, this.deps, grant.outputCap);
  }

  async #hold(holder: CreditHolder, fit: CreditFit): Promise<CreditGrant> {
    const key = holderKeyOf(this.seller.id, holder);
    const { reservations } = this.deps;
    const epoch = reservations.beginRead();
    try {
      const account = await this.#accounts.read(key, this.seller.id, holder);
      if (!account || account.status !== 'active') throw holder.kind === 'receipt' ? invalidReceipt() : this.#planRequired();
      const balance = account.balanceMicros;
      if (!fit.payableFrom(balance)) throw this.#outOfCredit(holder, `cannot cover this call, which needs at least ${usd(fit.leastMicros)}`, balance);
      const free = reservations.freeOf(key, balance, epoch);
      const wanted = wantedFrom(fit, balance, free, 'free');
      const hold = wanted && reservations.tryHold(key, balance, wanted.micros, epoch);
      if (hold) return wanted.outputCap === undefined ? { hold } : { hold, outputCap: wanted.outputCap };
      const since = reservations.releasesOf(key);
      const heldTooLong = (waitedMs: number) =>
        this.#outOfCredit(
          holder,
          `covers this call (at least ${usd(fit.leastMicros)}), but calls in flight held all but ${usd(free)} of it for the ${waitedMs} ms this call waited`,
          balance,
        );
      const cause = new HeldByOtherCalls((timeoutMs, signal) => reservations.whenReleased(key, since, timeoutMs, signal), heldTooLong);
      throw new AppError('insufficient_quota', 'The credit is held by calls in flight', { cause });
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

  /** The refusal for a holder whose credit, `balanceMicros`, `why` (names what the call needs). */
  #outOfCredit(holder: CreditHolder, why: string, balanceMicros: number) {
    if (holder.kind === 'receipt') {
      return balanceMicros <= 0
        ? paymentError('receipt_credit_exhausted', 'The receipt has no credit left; receipts cannot be topped up')
        : paymentError('receipt_credit_insufficient', `The receipt's credit (${usd(balanceMicros)}) ${why}; receipts cannot be topped up`);
    }
    return paymentError('usage_exhausted', `Your Credits (${usd(balanceMicros)}) ${why}; extend them and retry`, {
      extend: { url: `${this.deps.basePath}/extend`, method: 'POST' },
    });
  }
}

class StorefrontAdmission implements Admission {
  #done = false;
  readonly headers?: Readonly<Record<string, string>>;

  constructor(
    private readonly settling: { sellerId: string; holder: CreditHolder; accounts: AccountReads },
    private readonly principal: Principal,
    private readonly call: MeteredCall,
    private readonly hold: Hold,
    private readonly price: TokenPrice,
    private readonly overheads: InputOverheads,
    private readonly deps: StorefrontMeterDeps,
    readonly outputCap?: number,
  ) {
    if (outputCap !== undefined) this.headers = { [OUTPUT_CAP_HEADER]: String(outputCap) };
  }

  async settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) throw new AppError('internal', 'a metered call was settled twice');
    this.#done = true;
    this.overheads.observe(this.call, usage);
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
      costMicros: usage.costMicros ?? costMicros(usage.model ? this.deps.priceOf(usage.model) : this.price, usage.inputTokens, usage.outputTokens, usage),
      requestId: this.call.requestId,
      status: usage.status,
      createdAtMs: this.deps.clock.nowMs(),
    };
    if (usage.cachedInputTokens) record.cachedInputTokens = usage.cachedInputTokens;
    if (usage.cacheWriteTokens) record.cacheWriteTokens = usage.cacheWriteTokens;
    if (usage.deployment !== undefined) record.deployment = usage.deployment;
    labelRecord(record, this.call);
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

  /** The holder's balance once the draw is committed (read after it, or shared with a read after it). */
  async #balance(): Promise<number> {
    const { sellerId, holder, accounts } = this.settling;
    const account = await accounts.read(holderKeyOf(sellerId, holder), sellerId, holder, this.deps.usage.commits);
    return account?.balanceMicros ?? 0;
  }

  release(): void {
    this.#done = true;
    this.hold.release();
  }
}

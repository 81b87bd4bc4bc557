/**
 * Key budgets in this process's memory: the default, and what a replica falls back to
 * while Redis is unreachable. Holds live in a ReservationBook of their own (named by
 * key, window and window start: reservations.ts), so a hold given back after its cost
 * was counted is counted by every read begun before (no admission sees neither).
 *
 * What a key spent in a window is a counter per account: read from the usage records
 * (the sum of the key's cost in the window), then raised by each of this process's
 * settlements as its cost is committed. It is read again at most every SPEND_REFRESH_MS
 * (to learn other replicas' spend), and only while none of the key's settlements is
 * under way here: a read then sees every settlement that counted before it and none that
 * counts after, so no cost is counted twice or missed. Holds are not shared: with N
 * replicas a burst can hold up to N times what is left (docs/credits.md states the bound).
 */
import { ReservationBook } from './reservations.js';
import { accountName, type BudgetAccount, type BudgetHold, type BudgetLedger, type BudgetView, type SpendStore } from './budget-ledger.port.js';

/** How long a counter answers before it is read again from the usage records (another replica's spend is seen after at most this). */
export const SPEND_REFRESH_MS = 1_000;

interface Counter {
  spent: number;
  readAtMs: number;
}

/** Per key: settlements under way (begun, not yet counted), and settlements begun so far. */
interface Settling {
  underWay: number;
  begun: number;
}

/** What keys spent per window: counters read from the usage records and raised by this process's settlements. */
class SpendCounters {
  readonly #counters = new Map<string, Counter>();
  readonly #reading = new Map<string, Promise<number>>();
  readonly #settling = new Map<string, Settling>();

  constructor(private readonly store: SpendStore) {}

  read(account: BudgetAccount, name: string): Promise<number> | number {
    const counter = this.#counters.get(name);
    const settling = this.#settling.get(account.keyId);
    // While a settlement is under way, the usage records may or may not hold its cost yet: the counter answers.
    if (counter && (performance.now() - counter.readAtMs < SPEND_REFRESH_MS || (settling?.underWay ?? 0) > 0)) return counter.spent;
    if (!counter) this.#dropOtherWindows(account, name);
    const now = this.store.spentNow(account.keyId, account.span.startMs);
    if (now !== null) {
      this.#counters.set(name, { spent: now, readAtMs: performance.now() });
      return now;
    }
    return this.#readAsync(account, name);
  }

  #readAsync(account: BudgetAccount, name: string): Promise<number> {
    let reading = this.#reading.get(name);
    if (reading) return reading;
    const begun = this.#settling.get(account.keyId)?.begun ?? 0;
    reading = this.store.spentSince(account.keyId, account.span.startMs).then((spent) => {
      // A settlement begun during the read may or may not be in it: the counter, which counts it exactly, stays.
      const current = this.#counters.get(name);
      if ((this.#settling.get(account.keyId)?.begun ?? 0) === begun || !current) {
        this.#counters.set(name, { spent, readAtMs: performance.now() });
        return spent;
      }
      return current.spent;
    });
    const done = () => this.#reading.delete(name);
    reading.then(done, done);
    this.#reading.set(name, reading);
    return reading;
  }

  /** A new window of the key: the counters of its earlier windows are done with. */
  #dropOtherWindows(account: BudgetAccount, name: string): void {
    const prefix = `${account.keyId}:${account.budget.window}:`;
    for (const other of this.#counters.keys()) if (other !== name && other.startsWith(prefix)) this.#counters.delete(other);
  }

  /** A settlement of `keyId` began: its cost is being committed. */
  settling(keyId: string): void {
    const settling = this.#settling.get(keyId) ?? { underWay: 0, begun: 0 };
    settling.underWay += 1;
    settling.begun += 1;
    this.#settling.set(keyId, settling);
  }

  /** A settlement of `keyId` ended (its cost, if any, counted by count()). */
  ended(keyId: string): void {
    const settling = this.#settling.get(keyId);
    if (!settling) return;
    settling.underWay -= 1;
    if (settling.underWay === 0) this.#settling.delete(keyId);
  }

  /** `costMicros` was committed in `now`'s window. */
  count(now: BudgetAccount, costMicros: number): void {
    const counter = this.#counters.get(accountName(now));
    if (counter) counter.spent += costMicros;
  }
}

export class LocalBudgetLedger implements BudgetLedger {
  readonly #holds = new ReservationBook();
  readonly #spends: SpendCounters;

  constructor(store: SpendStore) {
    this.#spends = new SpendCounters(store);
  }

  async view(account: BudgetAccount): Promise<BudgetView> {
    const name = accountName(account);
    const holds = this.#holds;
    const epoch = holds.beginRead();
    let spent: number;
    try {
      spent = await this.#spends.read(account, name);
    } catch (err) {
      holds.endRead(epoch);
      throw err;
    }
    const left = account.budget.limitMicros - spent;
    const since = holds.releasesOf(name);
    return {
      spent,
      held: left - holds.freeOf(name, left, epoch),
      tryHold: (micros) => Promise.resolve(this.#hold(account.keyId, name, left, micros, epoch)),
      whenReleased: (timeoutMs, signal) => holds.whenReleased(name, since, timeoutMs, signal),
      close: () => holds.endRead(epoch),
    };
  }

  #hold(keyId: string, name: string, left: number, micros: number, epoch: number): BudgetHold | null {
    const hold = this.#holds.tryHold(name, left, micros, epoch);
    if (!hold) return null;
    let state: 'held' | 'settling' | 'done' = 'held';
    // The cost is counted and the hold given back in one step: no admission sees neither.
    const end = (now: BudgetAccount | null, costMicros: number) => {
      if (state === 'done') return;
      if (state === 'settling') this.#spends.ended(keyId);
      if (now) this.#spends.count(now, costMicros);
      state = 'done';
    };
    return {
      micros,
      settling: () => {
        if (state !== 'held') return;
        state = 'settling';
        this.#spends.settling(keyId);
      },
      settled: (costMicros, now) => {
        end(now, costMicros);
        hold.settled();
      },
      release: () => {
        end(null, 0);
        hold.release();
      },
    };
  }
}

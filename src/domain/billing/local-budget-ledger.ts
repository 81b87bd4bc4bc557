/**
 * Key budgets in this process's memory: the default, and what a replica falls back to
 * while Redis is unreachable. Holds live in a ReservationBook of their own (named by
 * key, window and window start: reservations.ts), so a hold given back after its cost
 * was committed is counted by every read begun before (no admission sees neither the
 * cost nor the hold). What a key spent in the window is read from the usage records,
 * kept for KNOWN_BALANCE_TTL_MS and dropped whenever this process commits a cost of that
 * key: it is never older than this process's own settlements, and misses another
 * replica's for at most that long. Holds are not shared: with N replicas a burst can
 * hold up to N times what is left (docs/credits.md states the bound).
 */
import { KNOWN_BALANCE_TTL_MS } from './balance-reader.js';
import { ReservationBook } from './reservations.js';
import { accountName, type BudgetAccount, type BudgetHold, type BudgetLedger, type BudgetView, type SpendStore } from './budget-ledger.port.js';

interface Known {
  spent: number;
  atMs: number;
}

/** What keys spent per window: a read shared by concurrent admissions, kept briefly, dropped by this process's settlements. */
class SpendReader {
  readonly #known = new Map<string, Known>();
  readonly #reading = new Map<string, Promise<number>>();
  /** Counts this process's settlements per key: a read that began before one is not kept. */
  readonly #settlements = new Map<string, number>();

  constructor(private readonly store: SpendStore) {}

  read(account: BudgetAccount, name: string): Promise<number> | number {
    const known = this.#known.get(name);
    if (known && performance.now() - known.atMs < KNOWN_BALANCE_TTL_MS) return known.spent;
    const { keyId } = account;
    const now = this.store.spentNow(keyId, account.span.startMs);
    if (now !== null) {
      this.#known.set(name, { spent: now, atMs: performance.now() });
      return now;
    }
    let reading = this.#reading.get(name);
    if (!reading) {
      const settlements = this.#settlements.get(keyId) ?? 0;
      reading = this.store.spentSince(keyId, account.span.startMs).then((spent) => {
        if ((this.#settlements.get(keyId) ?? 0) === settlements) this.#known.set(name, { spent, atMs: performance.now() });
        return spent;
      });
      const done = () => this.#reading.delete(name);
      reading.then(done, done);
      this.#reading.set(name, reading);
    }
    return reading;
  }

  /** This process committed a cost of `keyId`: later reads must see it. */
  settled(keyId: string): void {
    this.#settlements.set(keyId, (this.#settlements.get(keyId) ?? 0) + 1);
    for (const name of this.#known.keys()) if (name.startsWith(`${keyId}:`)) this.#known.delete(name);
  }
}

export class LocalBudgetLedger implements BudgetLedger {
  readonly #holds = new ReservationBook();
  readonly #spends: SpendReader;

  constructor(store: SpendStore) {
    this.#spends = new SpendReader(store);
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
      tryHold: (micros) => Promise.resolve(this.#hold(account, name, left, micros, epoch)),
      whenReleased: (timeoutMs, signal) => holds.whenReleased(name, since, timeoutMs, signal),
      close: () => holds.endRead(epoch),
    };
  }

  #hold(account: BudgetAccount, name: string, left: number, micros: number, epoch: number): BudgetHold | null {
    const hold = this.#holds.tryHold(name, left, micros, epoch);
    if (!hold) return null;
    return {
      micros,
      settled: () => {
        this.#spends.settled(account.keyId);
        hold.settled();
      },
      release: () => hold.release(),
    };
  }
}

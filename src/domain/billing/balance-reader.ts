/**
 * Balance reads for the credit check: at most one query per project and event-loop turn.
 *
 * When the store can answer at once (the embedded database), the first read of a project
 * in a turn queries it and the turn's later reads share that answer, until the turn ends
 * or this process commits usage (invalidate()): no read waits, and none sees a balance
 * older than this process's last debit. Otherwise the reads requested during one turn
 * share one query, issued after all of them were requested (so none sees an older
 * balance than a read of its own would).
 */
import type { BalanceStore } from './balance-store.port.js';

export class BalanceReader {
  #waiting = new Map<string, Array<(balance: number | undefined) => void>>();
  #reject: Array<(err: unknown) => void> = [];

  /** Balances read synchronously in this turn. */
  readonly #thisTurn = new Map<string, number | undefined>();
  readonly #endTurn = () => this.#thisTurn.clear();

  constructor(private readonly store: BalanceStore) {}

  read(projectId: string): Promise<number | undefined> {
    if (this.#thisTurn.has(projectId)) return Promise.resolve(this.#thisTurn.get(projectId));
    const now = this.store.balanceNow(projectId);
    if (now) {
      if (this.#thisTurn.size === 0) setImmediate(this.#endTurn);
      this.#thisTurn.set(projectId, now.balance);
      return Promise.resolve(now.balance);
    }
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) setImmediate(() => void this.#flush());
      const list = this.#waiting.get(projectId);
      if (list) list.push(resolve);
      else this.#waiting.set(projectId, [resolve]);
      this.#reject.push(reject);
    });
  }

  /** This process committed debits: later reads must see them. */
  invalidate(): void {
    this.#thisTurn.clear();
  }

  async #flush(): Promise<void> {
    const waiting = this.#waiting;
    const rejects = this.#reject;
    this.#waiting = new Map();
    this.#reject = [];
    try {
      const balances = await this.store.balancesOf([...waiting.keys()]);
      for (const [projectId, resolvers] of waiting) for (const resolve of resolvers) resolve(balances.get(projectId));
    } catch (err) {
      for (const reject of rejects) reject(err);
    }
  }
}

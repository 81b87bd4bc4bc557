/**
 * Balance reads for the credit check: at most one query per project and event-loop turn,
 * and on a database across the network (PostgreSQL) usually none.
 *
 * When the store can answer at once (the embedded database), the first read of a project
 * in a turn queries it and the turn's later reads share that answer, until the turn ends
 * or this process commits usage (invalidate()): no read waits, and none sees a balance
 * older than this process's last debit.
 *
 * Otherwise a balance this process learned is kept for KNOWN_BALANCE_TTL_MS: the balance
 * its own usage commit left (the debit returns it), or a query's answer. Every commit of
 * this process replaces or drops what it changed, and credit granted here drops it
 * (forget()), so a kept balance is never older than this process's own debits; it can
 * miss another replica's debits or grants for at most the TTL (replicas do not share
 * holds either; docs/credits.md states the bound). Reads of unknown balances requested
 * during one turn share one query, issued after all of them were requested.
 */
import type { BalanceStore } from './balance-store.port.js';
import type { BalancesAfter } from './usage-store.port.js';

/** How long a learned balance answers reads (another replica's debit is seen after at most this). */
export const KNOWN_BALANCE_TTL_MS = 100;

interface Known {
  balance: number;
  atMs: number;
}

export class BalanceReader {
  #waiting = new Map<string, Array<(balance: number | undefined) => void>>();
  #reject: Array<(err: unknown) => void> = [];

  /** Balances read synchronously in this turn. */
  readonly #thisTurn = new Map<string, number | undefined>();
  readonly #endTurn = () => this.#thisTurn.clear();
  /** Balances learned from commits and queries (stores that cannot answer at once). */
  readonly #known = new Map<string, Known>();
  /** Counts commits and grants: an answer that began before one is not kept. */
  #generation = 0;

  constructor(private readonly store: BalanceStore) {}

  /** Counts the changes so far: pass it to invalidate() for a commit that began now. */
  get generation(): number {
    return this.#generation;
  }

  read(projectId: string): Promise<number | undefined> {
    if (this.#thisTurn.has(projectId)) return Promise.resolve(this.#thisTurn.get(projectId));
    const now = this.store.balanceNow(projectId);
    if (now) {
      if (this.#thisTurn.size === 0) setImmediate(this.#endTurn);
      this.#thisTurn.set(projectId, now.balance);
      return Promise.resolve(now.balance);
    }
    const known = this.#known.get(projectId);
    if (known && performance.now() - known.atMs < KNOWN_BALANCE_TTL_MS) return Promise.resolve(known.balance);
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) setImmediate(() => void this.#flush());
      const list = this.#waiting.get(projectId);
      if (list) list.push(resolve);
      else this.#waiting.set(projectId, [resolve]);
      this.#reject.push(reject);
    });
  }

  /**
   * This process committed debits: later reads must see them. `balances`: what the
   * commit's debits left, kept when no other change completed since the commit began
   * (`since`, the generation then); otherwise every learned balance is dropped.
   */
  invalidate(balances?: BalancesAfter, since?: number): void {
    this.#thisTurn.clear();
    const current = since === this.#generation;
    this.#generation++;
    if (!balances || !current) {
      this.#known.clear();
      return;
    }
    const atMs = performance.now();
    for (const [projectId, balance] of balances) this.#known.set(projectId, { balance, atMs });
  }

  /** The project's balance changed here other than by a usage commit (credit granted): read it anew. */
  forget(projectId: string): void {
    this.#generation++;
    this.#known.delete(projectId);
    this.#thisTurn.delete(projectId);
  }

  async #flush(): Promise<void> {
    const waiting = this.#waiting;
    const rejects = this.#reject;
    this.#waiting = new Map();
    this.#reject = [];
    const generation = this.#generation;
    const atMs = performance.now();
    try {
      const balances = await this.store.balancesOf([...waiting.keys()]);
      if (generation === this.#generation) for (const [projectId, balance] of balances) this.#known.set(projectId, { balance, atMs });
      for (const [projectId, resolvers] of waiting) for (const resolve of resolvers) resolve(balances.get(projectId));
    } catch (err) {
      for (const reject of rejects) reject(err);
    }
  }
}

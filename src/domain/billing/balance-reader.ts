/**
 * Coalesced balance reads for the credit check: the reads requested during one
 * event-loop turn share one query, issued after all of them were requested (so none
 * sees an older balance than a read of its own would). Under load this turns one
 * SELECT per call into one per turn.
 */
export interface BalanceStore {
  balancesOf(projectIds: readonly string[]): Promise<Map<string, number>>;
}

export class BalanceReader {
  #waiting = new Map<string, Array<(balance: number | undefined) => void>>();
  #reject: Array<(err: unknown) => void> = [];

  constructor(private readonly store: BalanceStore) {}

  read(projectId: string): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) setImmediate(() => void this.#flush());
      const list = this.#waiting.get(projectId);
      if (list) list.push(resolve);
      else this.#waiting.set(projectId, [resolve]);
      this.#reject.push(reject);
    });
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

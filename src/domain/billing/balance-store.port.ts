/** Where project balances are read from: the balance reader batches its reads per event-loop turn. */

export interface BalanceStore {
  balancesOf(projectIds: readonly string[]): Promise<Map<string, number>>;
  /** The balance without waiting, or null when the store cannot answer synchronously now. */
  balanceNow(projectId: string): { balance: number | undefined } | null;
}

/**
 * Where a key's budget is kept: what the key spent in the current window (its settled
 * cost, from the usage records) and what its calls in flight hold. In this process's
 * memory (local-budget-ledger.ts) or shared by replicas through Redis
 * (storage/budget/redis-budget-ledger.ts); key-budgets.ts holds against it.
 */
import type { KeyBudget } from '../identity/key-policy.types.js';
import type { WindowSpan } from './budget-window.js';

/** One key's budget in one window. */
export interface BudgetAccount {
  keyId: string;
  budget: KeyBudget;
  span: WindowSpan;
}

/** The account's name in a ledger: the key, the window kind and where the window starts. */
export const accountName = (account: BudgetAccount): string => `${account.keyId}:${account.budget.window}:${account.span.startMs}`;

export interface BudgetHold {
  readonly micros: number;
  /** The call's cost is being committed: settled() or release() follows. */
  settling(): void;
  /**
   * The call's cost was committed (its usage record written): count it as spent in
   * `now`'s window of the key, and give the hold back. Idempotent with release().
   */
  settled(costMicros: number, now: BudgetAccount): void;
  /** Gives the hold back: the call ended without charge. Idempotent. */
  release(): void;
}

/** The account as one admission reads it: spent and held, and a hold checked against what is current. */
export interface BudgetView {
  readonly spent: number;
  readonly held: number;
  /** Holds `micros` when the spend and the holds as they are now leave room for it; null otherwise. */
  tryHold(micros: number): Promise<BudgetHold | null>;
  /**
   * Resolves once a hold of the account may have been given back since the view was
   * taken, or after `timeoutMs`, whichever is first; rejects when `signal` aborts.
   */
  whenReleased(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** The admission is done with the view. */
  close(): void;
}

export interface BudgetLedger {
  view(account: BudgetAccount): Promise<BudgetView>;
}

/** Where a key's settled spend is read from: the usage records. */
export interface SpendStore {
  /** The key's settled cost from `sinceMs` on, in micro-dollars. */
  spentSince(keyId: string, sinceMs: number): Promise<number>;
  /** The same without waiting, or null when the store cannot answer synchronously now. */
  spentNow(keyId: string, sinceMs: number): number | null;
}

/**
 * What an API key may do beyond authenticating: the models it may reach, its spending
 * budget per window, its own request and token rates, when it expires, and what its
 * calls are labelled with. Every field is optional; a key without a policy is limited
 * only by its project's credit and the scope's rate limit.
 */

/** A budget's window, in UTC calendar terms: the day, the ISO week (from Monday), the month, or the key's whole life. */
export type BudgetWindow = 'day' | 'week' | 'month' | 'total';

export interface KeyBudget {
  /** The most the key's calls may cost within one window, in micro-dollars. */
  limitMicros: number;
  window: BudgetWindow;
}

export interface KeyPolicy {
  /** Model names the key may reach (aliases included), as glob patterns (`small-*`); absent means every model. */
  models?: readonly string[];
  budget?: KeyBudget;
  /** Requests per minute for this key. */
  rpm?: number;
  /** Tokens per minute for this key: counted on settled usage, checked on the call's estimate. */
  tpm?: number;
  /** When the key stops working (epoch ms); absent means never. */
  expiresAtMs?: number;
  /** The operator's labels for the key, returned as set. */
  metadata?: Readonly<Record<string, string>>;
  /** Tags recorded on every call the key makes, beside the call's own. */
  tags?: readonly string[];
}

/** What the storefront's activity pages read: purchases and credit accounts, newest first. */

import type { Page } from '../shared/pagination.js';
import type { CreditAccount, CreditMovement, Rail } from './storefront.types.js';

export interface PurchaseFilter {
  rail?: Rail;
}

export interface AccountFilter {
  holderKind?: 'agent' | 'receipt';
}

/**
 * Where an account stands in the list (newest first: creation time, then its key). An
 * account has no id of its own (its key is seller, holder kind, holder id), so the list's
 * cursor is this position, handed out as an opaque string by accountCursor().
 */
export interface AccountPosition {
  createdAtMs: number;
  sellerId: string;
  holderKind: string;
  holderId: string;
}

export interface StorefrontActivityStore {
  /** Purchase movements, newest first; `after` is the id of the last one of the previous page. */
  purchases(filter: PurchaseFilter, limit: number, after?: string): Promise<Page<CreditMovement>>;
  /** Accounts, newest first; `after` is the position of the last one of the previous page. */
  accounts(filter: AccountFilter, limit: number, after?: AccountPosition): Promise<Page<CreditAccount>>;
}

/**
 * The storefront's activity as an operator reads it: purchase movements of the ledger and
 * credit accounts, newest first, a page at a time (keyset pagination: the ledger by id,
 * accounts by creation time then key, compared as one row value, which SQLite and
 * PostgreSQL both support).
 */
import type { Database } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { AccountFilter, AccountPosition, PurchaseFilter, StorefrontActivityStore } from '../../../domain/storefront/activity-store.port.js';
import type { CreditAccount, CreditMovement } from '../../../domain/storefront/storefront.types.js';
import { toAccount, toMovement } from './storefront.repository.js';

const pageOf = <R, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> => ({
  items: rows.slice(0, limit).map(map),
  hasMore: rows.length > limit,
});

export class StorefrontActivityRepository implements StorefrontActivityStore {
  constructor(private readonly database: Database) {}

  async purchases(filter: PurchaseFilter, limit: number, after?: string): Promise<Page<CreditMovement>> {
    let query = this.database.db.selectFrom('storefront_ledger').selectAll().where('kind', '=', 'purchase');
    if (filter.rail) query = query.where('rail', '=', filter.rail);
    if (after) query = query.where('id', '<', after);
    return pageOf(await query.orderBy('id', 'desc').limit(limit + 1).execute(), limit, toMovement);
  }

  async accounts(filter: AccountFilter, limit: number, after?: AccountPosition): Promise<Page<CreditAccount>> {
    let query = this.database.db.selectFrom('storefront_accounts').selectAll();
    if (filter.holderKind) query = query.where('holder_kind', '=', filter.holderKind);
    if (after) {
      query = query.where(({ eb, refTuple, tuple }) =>
        eb(refTuple('created_at', 'seller_id', 'holder_kind', 'holder_id'), '<', tuple(after.createdAtMs, after.sellerId, after.holderKind, after.holderId)),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('seller_id', 'desc')
      .orderBy('holder_kind', 'desc')
      .orderBy('holder_id', 'desc')
      .limit(limit + 1)
      .execute();
    return pageOf(rows, limit, toAccount);
  }
}

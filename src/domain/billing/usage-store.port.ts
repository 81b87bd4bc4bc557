/** Where usage records are written, each with its debit and outbox entries in one transaction. */

import type { OutboxEntry } from '../outbox/outbox.types.js';
import type { UsageRecord } from './usage.types.js';

/** The balances the debits of one write left, by project id, when the store learned them in that write (else undefined). */
export type BalancesAfter = ReadonlyMap<string, number> | undefined;

export interface UsageStore {
  /** The record, its debit and `outbox` in one transaction. */
  recordAndDebit(record: UsageRecord, outbox?: readonly OutboxEntry[]): Promise<BalancesAfter>;
  /** Several records, their debits and `outbox` in one transaction. */
  recordAndDebitMany(records: readonly UsageRecord[], outbox?: readonly OutboxEntry[]): Promise<BalancesAfter>;
}

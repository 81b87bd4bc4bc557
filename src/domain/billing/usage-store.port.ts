/** Where usage records are written, each with its debit and outbox entries in one transaction. */

import type { OutboxEntry } from '../outbox/outbox.types.js';
import type { UsageRecord } from './usage.types.js';

export interface UsageStore {
  /** The record, its debit and `outbox` in one transaction. */
  recordAndDebit(record: UsageRecord, outbox?: readonly OutboxEntry[]): Promise<void>;
  /** Several records, their debits and `outbox` in one transaction. */
  recordAndDebitMany(records: readonly UsageRecord[], outbox?: readonly OutboxEntry[]): Promise<void>;
}

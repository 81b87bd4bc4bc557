/**
 * Group commit for usage records. Every record is still written with its debit in one
 * transaction before its write() resolves (group commit, not write-behind), but the records
 * of one event-loop turn, and those arriving while a transaction is being written (a
 * PostgreSQL round trip), share a transaction of at most MAX_GROUP records: under load one
 * commit carries many calls; alone, a record waits one turn (setImmediate). No group waits
 * on a clock: SQLite commits synchronously, so a timer would add its wait to every answer
 * and give the event loop nothing else to do meanwhile (bench/RESULTS.md, "Settlements
 * committed in groups"). A failed shared commit wrote none of its records: they are retried record by
 * record, so one bad record cannot fail the others and none is written twice.
 * A record's outbox messages (settlements owed to third parties) are written in the same
 * transaction as the record, as the entries the hooks make of a transaction's messages
 * (one per target kind where they combine, so a busy transaction writes one row, not one
 * per call).
 */
import type { OutboxEntry, OutboxMessage } from '../outbox/outbox.types.js';
import type { UsageRecord } from './usage.types.js';
import type { BalancesAfter, UsageStore } from './usage-store.port.js';

export interface UsageWriterHooks {
  /** The outbox entries of the messages one transaction writes. */
  entriesOf(messages: readonly OutboxMessage[]): OutboxEntry[];
  /** Just before each transaction: a mark handed back to committed() (the balance reader's generation). */
  starting(): number;
  /** After every transaction that committed records, with the outbox entries it wrote, the balances it left if known, and its starting() mark. */
  committed(entries: readonly OutboxEntry[], balances: BalancesAfter, started: number): void;
}

interface Pending {
  record: UsageRecord;
  outbox: readonly OutboxMessage[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

const NO_ENTRIES: readonly OutboxEntry[] = [];

/** The records of one transaction at most (bounds its size and its bound parameters). */
export const MAX_GROUP = 500;

export class UsageWriter {
  #queue: Pending[] = [];
  #draining = false;

  constructor(
    private readonly store: UsageStore,
    private readonly hooks: UsageWriterHooks,
  ) {}

  write(record: UsageRecord, outbox: readonly OutboxMessage[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ record, outbox, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue.splice(0, MAX_GROUP);
        if (group.length === 1) await this.#writeOne(group[0]!);
        else await this.#writeGroup(group);
      }
    } finally {
      this.#draining = false;
    }
  }

  async #writeGroup(group: Pending[]): Promise<void> {
    let entries: readonly OutboxEntry[];
    let started: number;
    let balances: BalancesAfter;
    try {
      entries = this.#entriesOf(group.flatMap((p) => p.outbox));
      started = this.hooks.starting();
      balances = await this.store.recordAndDebitMany(group.map((p) => p.record), entries);
    } catch {
      // The commit is atomic, so nothing of the group was written: each record gets its own
      // transaction and its own error. (Had it committed unseen, a connection lost after the
      // commit, each retry fails on its record's key: still written once.)
      for (const p of group) await this.#writeOne(p);
      return;
    }
    // Only the commit's failure retries: what runs after it must never write a record twice.
    this.hooks.committed(entries, balances, started);
    for (const p of group) p.resolve();
  }

  #entriesOf(messages: readonly OutboxMessage[]): readonly OutboxEntry[] {
    return messages.length === 0 ? NO_ENTRIES : this.hooks.entriesOf(messages);
  }

  async #writeOne(pending: Pending): Promise<void> {
    let entries: readonly OutboxEntry[];
    let started: number;
    let balances: BalancesAfter;
    try {
      entries = this.#entriesOf(pending.outbox);
      started = this.hooks.starting();
      balances = await this.store.recordAndDebit(pending.record, entries);
    } catch (err) {
      pending.reject(err);
      return;
    }
    this.hooks.committed(entries, balances, started);
    pending.resolve();
  }
}

/**
 * Group commit for usage records. Every record is still written with its debit in one
 * transaction before its write() resolves, but the records of one event-loop turn (and
 * those arriving while a transaction is being written) share a transaction: under load
 * one commit carries many calls; alone, a record waits one turn (setImmediate). A failed
 * shared commit is retried record by record, so one bad record cannot fail the others.
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

/** Bounds one transaction's size (and its bound parameters). */
const MAX_BATCH = 500;

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
        const batch = this.#queue.splice(0, MAX_BATCH);
        if (batch.length === 1) await this.#writeOne(batch[0]!);
        else await this.#writeMany(batch);
      }
    } finally {
      this.#draining = false;
    }
  }

  async #writeMany(batch: Pending[]): Promise<void> {
    try {
      const entries = this.#entriesOf(batch.flatMap((p) => p.outbox));
      const started = this.hooks.starting();
      const balances = await this.store.recordAndDebitMany(batch.map((p) => p.record), entries);
      this.hooks.committed(entries, balances, started);
      for (const p of batch) p.resolve();
    } catch {
      for (const p of batch) await this.#writeOne(p);
    }
  }

  #entriesOf(messages: readonly OutboxMessage[]): readonly OutboxEntry[] {
    return messages.length === 0 ? NO_ENTRIES : this.hooks.entriesOf(messages);
  }

  async #writeOne(pending: Pending): Promise<void> {
    try {
      const entries = this.#entriesOf(pending.outbox);
      const started = this.hooks.starting();
      const balances = await this.store.recordAndDebit(pending.record, entries);
      this.hooks.committed(entries, balances, started);
      pending.resolve();
    } catch (err) {
      pending.reject(err);
    }
  }
}

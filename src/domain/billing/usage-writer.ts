/**
 * Group commit for usage records. Every record is written with its debit in one
 * transaction before its write() resolves. The first record of an event-loop turn is
 * committed at once when the store can do so without waiting (the embedded database):
 * its reply then waits for its own commit only, not for the rest of the turn (every
 * other request and upstream answer the loop has ready). The turn's later records, and
 * every record on a store that cannot commit at once, share a transaction at the end of
 * the turn (setImmediate), with those arriving while a transaction is being written:
 * under load one commit carries many calls, at the cost of one extra commit per turn. A
 * failed shared commit is retried record by record, so one bad record cannot fail the
 * others. A record's outbox messages (settlements owed to third parties) are written in
 * the same transaction as the record, as the entries the hooks make of a transaction's
 * messages (one per target kind where they combine, so a busy transaction writes one
 * row, not one per call); a record with messages always waits for the turn's
 * transaction, where its messages combine with the others'.
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
  /** A record was committed at once in this turn: the turn's others are grouped. */
  #committedThisTurn = false;
  readonly #endTurn = () => {
    this.#committedThisTurn = false;
  };

  constructor(
    private readonly store: UsageStore,
    private readonly hooks: UsageWriterHooks,
  ) {}

  write(record: UsageRecord, outbox: readonly OutboxMessage[] = []): Promise<void> {
    if (outbox.length === 0 && !this.#draining && !this.#committedThisTurn && this.store.recordAndDebitNow) {
      const started = this.hooks.starting();
      let committed: { balances: BalancesAfter } | null;
      try {
        committed = this.store.recordAndDebitNow(record);
      } catch (err) {
        return Promise.reject(err);
      }
      if (committed) {
        this.#committedThisTurn = true;
        setImmediate(this.#endTurn);
        this.hooks.committed(NO_ENTRIES, committed.balances, started);
        return Promise.resolve();
      }
    }
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

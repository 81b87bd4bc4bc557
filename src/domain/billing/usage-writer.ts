/**
 * Group commit for usage records. Every record is still written with its debit in one
 * transaction before its write() resolves (group commit, not write-behind), but records
 * that arrive close together share a transaction: a group closes after GROUP_WINDOW_MS or
 * at MAX_GROUP records, whichever comes first, and records arriving while a group is being
 * written form the next one. The window opens only when the writer is busy (the record
 * before arrived within a window of this one): a lone record waits one event-loop turn
 * (setImmediate), as the records of one turn always share a transaction. A failed shared
 * commit is retried record by record, so one bad record cannot fail the others, and each
 * record is written at most once (a commit that failed wrote none of its records).
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

/**
 * How long a busy writer's group stays open for more records (a timer's smallest step).
 * At 1,000 calls a second it carries about two; each waits at most this long for its answer.
 */
export const GROUP_WINDOW_MS = 1;

/** The records of one transaction at most (and so its bound parameters); a full group commits at once. */
export const MAX_GROUP = 500;

export class UsageWriter {
  #queue: Pending[] = [];
  #draining = false;
  /** The open group's timer (busy writer), or null. */
  #window: NodeJS.Timeout | null = null;
  /** When the writer was last handed a record (performance.now()). */
  #lastArrivalMs = -Infinity;

  constructor(
    private readonly store: UsageStore,
    private readonly hooks: UsageWriterHooks,
  ) {}

  write(record: UsageRecord, outbox: readonly OutboxMessage[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      const nowMs = performance.now();
      const busy = nowMs - this.#lastArrivalMs < GROUP_WINDOW_MS;
      this.#lastArrivalMs = nowMs;
      this.#queue.push({ record, outbox, resolve, reject });
      if (this.#draining) return;
      if (this.#window !== null) {
        if (this.#queue.length >= MAX_GROUP) this.#closeGroup();
        return;
      }
      if (this.#queue.length > 1) return;
      if (busy) this.#window = setTimeout(() => this.#closeGroup(), GROUP_WINDOW_MS);
      else setImmediate(() => this.#startDrain());
    });
  }

  #closeGroup(): void {
    if (this.#window !== null) clearTimeout(this.#window);
    this.#window = null;
    this.#startDrain();
  }

  #startDrain(): void {
    if (this.#draining || this.#queue.length === 0) return;
    this.#draining = true;
    void this.#drain();
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
      // Nothing of the group was written: each record gets its own transaction, and its own error.
      for (const p of group) await this.#writeOne(p);
      return;
    }
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

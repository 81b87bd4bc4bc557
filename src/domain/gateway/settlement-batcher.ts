/**
 * Group commit for gateway settlements (the same scheme as billing/usage-writer.ts): every
 * settlement is committed before its write() resolves, but those of one event-loop turn
 * (and those arriving while a transaction is being written) share one transaction. A
 * failed shared commit is retried settlement by settlement, so one bad row cannot fail
 * the others.
 */
import type { UsageRecord } from '../billing/usage.types.js';
import type { UsageEvent } from './intermediary.port.js';
import type { SettlementWriter } from './intermediary-meter.js';

export type SettlementBatch = readonly { record: UsageRecord; events: readonly UsageEvent[] }[];

interface Pending {
  settlement: SettlementBatch[number];
  resolve: () => void;
  reject: (err: unknown) => void;
}

const MAX_BATCH = 200;

export class SettlementBatcher implements SettlementWriter {
  #queue: Pending[] = [];
  #draining = false;

  constructor(
    private readonly writeMany: (batch: SettlementBatch) => Promise<void>,
    /** After every committed transaction, with what it committed. */
    private readonly onCommitted: (batch: SettlementBatch) => void,
  ) {}

  write(record: UsageRecord, events: readonly UsageEvent[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ settlement: { record, events }, resolve, reject });
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
        try {
          await this.#commit(batch);
        } catch {
          for (const pending of batch) await this.#commit([pending]).catch(pending.reject);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  async #commit(batch: Pending[]): Promise<void> {
    const settlements = batch.map((p) => p.settlement);
    await this.writeMany(settlements);
    this.onCommitted(settlements);
    for (const p of batch) p.resolve();
  }
}

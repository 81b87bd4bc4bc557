/**
 * Group commit of line results: results that finish close together are written in one
 * transaction (each line still first-writer-wins, its usage written only if it was the
 * one recorded). A result is durable only once its write() resolves; a crash before that
 * loses the line's result, never bills it, and the line runs again.
 */
import type { Logger } from 'pino';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { Clock } from '../domain/shared/clock.js';
import type { LineResult } from '../domain/batches/batch.types.js';
import type { BatchLineResultStore, ResultEntry } from '../domain/batches/batch-stores.port.js';
import type { UsageRecord } from '../domain/billing/usage.types.js';
import { newOutboxEntry, type OutboxMessage } from '../domain/outbox/outbox.types.js';
import { sleep } from './sleep.js';

interface Pending extends ResultEntry {
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

const MAX_PER_FLUSH = 200;
const FLUSH_ATTEMPTS = 4;

export class ResultWriter {
  #queue: Pending[] = [];
  #flushing = false;

  constructor(
    private readonly deps: { results: BatchLineResultStore; billing: BillingService; clock: Clock; logger: Logger },
  ) {}

  /**
   * Resolves true when this call recorded the line (and wrote its usage and `outbox`
   * messages), false when it had been recorded already.
   */
  write(result: LineResult, usage: readonly UsageRecord[], outbox: readonly OutboxMessage[] = []): Promise<boolean> {
    const nowMs = this.deps.clock.nowMs();
    return new Promise((resolve, reject) => {
      this.#queue.push({ result, usage, outbox: outbox.map((message) => newOutboxEntry(message, nowMs)), resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // Let results finishing in the same tick join this flush.
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_PER_FLUSH);
      try {
        const inserted = await this.#flush(batch);
        batch.forEach((entry, i) => {
          if (inserted.has(i)) this.deps.billing.committed(entry.usage, (entry.outbox?.length ?? 0) > 0);
          entry.resolve(inserted.has(i));
        });
      } catch (err) {
        for (const entry of batch) entry.reject(err);
      }
    }
    this.#flushing = false;
  }

  async #flush(batch: Pending[]): Promise<Set<number>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.results.insertMany(batch, this.deps.clock.nowMs());
      } catch (err) {
        if (attempt >= FLUSH_ATTEMPTS) throw err;
        this.deps.logger.warn({ err, lines: batch.length }, 'retrying a line-result write');
        await sleep(50 * 2 ** attempt);
      }
    }
  }
}

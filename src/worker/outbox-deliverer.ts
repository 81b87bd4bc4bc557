/**
 * The outbox deliverer: a BackgroundWorker that delivers settlement messages written
 * with usage records (src/domain/outbox). Any number of processes and replicas may run
 * one against the same database: each pass leases the due entries it takes (the store's
 * claim is one guarded UPDATE), hands each to the handler registered for its target
 * kind, and then marks it delivered, reschedules it with exponential backoff and jitter,
 * or, after `maxAttempts`, marks it dead (an operator may replay it). A deliverer that
 * dies mid-delivery leaves its lease to expire; the entry is then delivered again, with
 * the same idempotency key, so the receiver can tell. Delivered entries are kept for
 * `deliveredRetentionMs` (an operator can see what went out), then deleted.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { BackgroundWorker } from './background-worker.js';
import type { Clock } from '../domain/shared/clock.js';
import { randomToken } from '../domain/shared/ids.js';
import {
  describeFailure,
  outboxBackoffMs,
  type OutboxEntry,
  type OutboxHandlers,
  type OutboxStore,
} from '../domain/outbox/outbox.types.js';

export type DeliveryOutcome = 'delivered' | 'retry' | 'dead';

export interface OutboxDelivererDeps {
  store: OutboxStore;
  handlers: OutboxHandlers;
  clock: Clock;
  logger: Logger;
  /** Attempts before an entry is marked dead. */
  maxAttempts: number;
  /** Counts each attempt's outcome (the metrics). */
  onOutcome?: (targetKind: string, outcome: DeliveryOutcome) => void;
  /** How often an idle deliverer looks for due entries. */
  pollIntervalMs?: number;
  /** How long a claimed entry stays this deliverer's; a delivery is aborted at half of it. */
  leaseMs?: number;
  /** Entries claimed (and delivered concurrently) per pass. */
  batchSize?: number;
  /** First retry delay; doubles per attempt up to retryCapMs. */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Jitter source (tests pin it). */
  random?: () => number;
  /** How long a delivered entry is kept; a pass at most every hour deletes older ones. */
  deliveredRetentionMs?: number;
}

const PURGE_INTERVAL_MS = 3_600_000;
const DEFAULT_RETENTION_MS = 7 * 86_400_000;

export interface OutboxPassReport {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  /** Delivered entries deleted (past their retention). */
  purged: number;
}

export class OutboxDeliverer implements BackgroundWorker {
  readonly name = 'outbox-deliverer';
  readonly workerId = `${hostname()}:${process.pid}:${randomToken(6)}`;
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<unknown> | undefined;
  #started = false;
  #stopped = false;
  #lastPurgeMs = Number.NEGATIVE_INFINITY;
  /** A wake() that arrived during a pass: the next pass starts at once. */
  #woken = false;

  constructor(private readonly deps: OutboxDelivererDeps) {}

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#schedule(0);
  }

  /** Looks for due entries now (entries were just committed in this process). */
  wake(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#pass) {
      this.#woken = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    // Deliveries under way are abandoned; their leases expire and another pass retries them.
    this.#abort.abort(new Error('the outbox deliverer is stopping'));
    await this.#pass;
  }

  /** One pass: claims the due entries and delivers them (tests call it directly). */
  async runOnce(): Promise<OutboxPassReport> {
    const { store, clock } = this.deps;
    const entries = await store.claimDue(this.workerId, clock.nowMs(), this.#leaseMs, this.deps.batchSize ?? 32);
    const report: OutboxPassReport = { claimed: entries.length, delivered: 0, retried: 0, dead: 0, purged: 0 };
    const outcomes = await Promise.all(entries.map((entry) => this.#deliver(entry)));
    for (const outcome of outcomes) {
      if (outcome === 'delivered') report.delivered++;
      else if (outcome === 'retry') report.retried++;
      else if (outcome === 'dead') report.dead++;
    }
    report.purged = await this.#purge();
    return report;
  }

  /** Deletes delivered entries past their retention, at most once per PURGE_INTERVAL_MS. */
  async #purge(): Promise<number> {
    const nowMs = this.deps.clock.nowMs();
    if (nowMs - this.#lastPurgeMs < PURGE_INTERVAL_MS) return 0;
    this.#lastPurgeMs = nowMs;
    return this.deps.store.purgeDelivered(nowMs - (this.deps.deliveredRetentionMs ?? DEFAULT_RETENTION_MS));
  }

  get #leaseMs(): number {
    return this.deps.leaseMs ?? 60_000;
  }

  /** Delivers one claimed entry and records the outcome; null when cut short by stop() or the lease was lost meanwhile. */
  async #deliver(entry: OutboxEntry): Promise<DeliveryOutcome | null> {
    const failure = await this.#attempt(entry);
    // A delivery cut short by stop() is not the receiver's failure: its lease expires and it goes again.
    if (failure !== null && this.#abort.signal.aborted) return null;
    const outcome: DeliveryOutcome = failure === null ? 'delivered' : entry.attempts >= this.deps.maxAttempts ? 'dead' : 'retry';
    if (!(await this.#record(entry, outcome, failure))) return null;
    this.deps.onOutcome?.(entry.targetKind, outcome);
    return outcome;
  }

  /** Hands the entry to its kind's handler: null on success, else why it failed. */
  async #attempt(entry: OutboxEntry): Promise<string | null> {
    const handler = this.deps.handlers.get(entry.targetKind);
    if (!handler) return `no outbox handler is registered for target kind "${entry.targetKind}"`.slice(0, 300);
    try {
      await handler.deliver(entry, AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#leaseMs / 2)]));
      return null;
    } catch (err) {
      return describeFailure(err);
    }
  }

  async #record(entry: OutboxEntry, outcome: DeliveryOutcome, error: string | null): Promise<boolean> {
    const { store, clock, logger } = this.deps;
    const context = { outboxId: entry.id, targetKind: entry.targetKind, attempts: entry.attempts, error };
    if (outcome === 'delivered') return store.markDelivered(entry.id, this.workerId, clock.nowMs());
    if (outcome === 'dead') {
      logger.error(context, 'outbox entry is dead after its last attempt');
      return store.markDead(entry.id, this.workerId, error ?? '');
    }
    logger.warn(context, 'outbox delivery failed; retrying later');
    const delay = outboxBackoffMs(entry.attempts, this.deps.retryBaseMs ?? 1_000, this.deps.retryCapMs ?? 3_600_000, this.deps.random);
    return store.reschedule(entry.id, this.workerId, clock.nowMs() + delay, error ?? '');
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#pass = this.runOnce()
        .then(
          (report) => report.claimed >= (this.deps.batchSize ?? 32),
          (err: unknown) => {
            this.deps.logger.error({ err }, 'outbox pass failed');
            return false;
          },
        )
        .then((more) => {
          this.#pass = undefined;
          // A full pass suggests more is due, and a wake during the pass that more was committed: go on at once.
          const now = more || this.#woken;
          this.#woken = false;
          if (!this.#stopped) this.#schedule(now ? 0 : (this.deps.pollIntervalMs ?? 1_000));
        });
    }, delayMs);
  }
}

/**
 * The outbox deliverer: a BackgroundWorker that delivers settlement messages written
 * with usage records (src/domain/outbox). Any number of processes and replicas may run
 * one against the same database: each pass leases the due entries it takes (the store's
 * claim is one guarded UPDATE; entries this process wrote while it ran were written
 * already leased to it and are taken from memory), hands a target kind's entries to its
 * handler (in one exchange where it can), and then marks them delivered, reschedules them
 * with exponential backoff and jitter, or marks them dead (refused for good, or after
 * `maxAttempts`; an operator may replay them); a combined entry (several messages one
 * transaction wrote, outboxEntriesOf) refused for good goes back as its parts, so only the
 * refused part dies. A deliverer whose process dies leaves its
 * leases to expire; the entries are then delivered by another, with the same idempotency
 * key, so the receiver can tell. Delivered entries are kept for
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
  newOutboxEntry,
  outboxEntriesOf,
  type DeliveryRefusal,
  type OutboxEntry,
  type OutboxHandler,
  type OutboxHandlers,
  type OutboxIntake,
  type OutboxLease,
  type OutboxMessage,
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
  /** Entries claimed per pass (a target kind's entries go in one exchange where its handler can). */
  batchSize?: number;
  /** How long a wake() waits for more entries before the pass it asks for. */
  coalesceMs?: number;
  /** First retry delay; doubles per attempt up to retryCapMs. */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Jitter source (tests pin it). */
  random?: () => number;
  /** How long a delivered entry is kept; a pass at most every hour deletes older ones. */
  deliveredRetentionMs?: number;
}

const PURGE_INTERVAL_MS = 3_600_000;
const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_COALESCE_MS = 100;
/** Entries kept in memory to send without a claim; past it they are claimed from the store. */
const MAX_FRESH = 10_000;
const DEFAULT_RETENTION_MS = 7 * 86_400_000;

export interface OutboxPassReport {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  /** Delivered entries deleted (past their retention). */
  purged: number;
}

export class OutboxDeliverer implements BackgroundWorker, OutboxIntake {
  readonly name = 'outbox-deliverer';
  readonly workerId = `${hostname()}:${process.pid}:${randomToken(6)}`;
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<unknown> | undefined;
  #started = false;
  #stopped = false;
  #lastPurgeMs = Number.NEGATIVE_INFINITY;
  /** A wake() that arrived during a pass: the next pass follows after the coalescing delay. */
  #woken = false;
  /** When the scheduled pass is due (performance.now()). */
  #dueAt = Number.POSITIVE_INFINITY;
  /** Entries this process wrote leased to this deliverer, oldest first, not yet taken by a pass. */
  #fresh: OutboxEntry[] = [];

  constructor(private readonly deps: OutboxDelivererDeps) {}

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#schedule(0);
  }

  /**
   * Entries were just committed in this process: a pass follows within `coalesceMs`, so a
   * busy server's settlements go out together (one claim, one exchange, one UPDATE for
   * many calls) instead of one pass per call.
   */
  wake(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#pass) {
      this.#woken = true;
      return;
    }
    const delay = this.#coalesceMs;
    if (this.#dueAt <= performance.now() + delay) return;
    clearTimeout(this.#timer);
    this.#schedule(delay);
  }

  /** Entries written now are leased to this deliverer while it runs (no claim needed to send them). */
  leaseFor(nowMs: number): OutboxLease | null {
    return this.#started && !this.#stopped ? { owner: this.workerId, expiresAtMs: nowMs + this.#leaseMs } : null;
  }

  /** A transaction's entries: combined where their handler can, leased here while this deliverer runs. */
  entriesFor(messages: readonly OutboxMessage[], nowMs: number): OutboxEntry[] {
    return outboxEntriesOf(messages, this.deps.handlers, nowMs, this.leaseFor(nowMs));
  }

  /** Entries just committed: the ones leased here are kept to send from memory; then a pass is asked for. */
  committed(entries: readonly OutboxEntry[]): void {
    for (const entry of entries) {
      // Beyond the bound, an entry stays leased in the store and is claimed once its lease runs out.
      if (entry.lease?.owner === this.workerId && this.#fresh.length < MAX_FRESH) this.#fresh.push(entry);
    }
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // Entries leased here and not yet sent wait out their lease; then any deliverer claims them.
    this.#fresh = [];
    clearTimeout(this.#timer);
    // Deliveries under way are abandoned; their leases expire and another pass retries them.
    this.#abort.abort(new Error('the outbox deliverer is stopping'));
    await this.#pass;
  }

  /** One pass: claims the due entries and delivers them, a target kind's entries together where its handler can (tests call it directly). */
  async runOnce(): Promise<OutboxPassReport> {
    const { store, clock } = this.deps;
    const nowMs = clock.nowMs();
    const limit = this.deps.batchSize ?? DEFAULT_BATCH_SIZE;
    const fresh = this.#takeFresh(nowMs, limit);
    const claimed = fresh.length < limit ? await store.claimDue(this.workerId, nowMs, this.#leaseMs, limit - fresh.length) : [];
    const entries = fresh.length > 0 ? fresh.concat(claimed) : claimed;
    const report: OutboxPassReport = { claimed: entries.length, delivered: 0, retried: 0, dead: 0, purged: 0 };
    const byKind = new Map<string, OutboxEntry[]>();
    for (const entry of entries) {
      const group = byKind.get(entry.targetKind);
      if (group) group.push(entry);
      else byKind.set(entry.targetKind, [entry]);
    }
    const outcomes = await Promise.all([...byKind].map(([kind, group]) => this.#deliverKind(this.deps.handlers.get(kind), group)));
    for (const outcome of outcomes.flat()) {
      if (outcome === 'delivered') report.delivered++;
      else if (outcome === 'retry') report.retried++;
      else if (outcome === 'dead') report.dead++;
    }
    report.purged = await this.#purge();
    return report;
  }

  /**
   * Up to `limit` entries leased here at their write, with at least half their lease left
   * (a delivery is cut off at half the lease); the others wait to be claimed once it ends.
   */
  #takeFresh(nowMs: number, limit: number): OutboxEntry[] {
    const taken = this.#fresh.splice(0, limit);
    return taken.filter((entry) => (entry.lease?.expiresAtMs ?? 0) - nowMs > this.#leaseMs / 2);
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

  /**
   * One target kind's entries: in one exchange when its handler has deliverMany, marked
   * delivered in one UPDATE. A batch the target refuses for good is tried entry by entry
   * (only the entries it refuses die); one it wants retried is retried whole.
   */
  async #deliverKind(handler: OutboxHandler | undefined, group: OutboxEntry[]): Promise<Array<DeliveryOutcome | null>> {
    if (!handler?.deliverMany || group.length < 2) return Promise.all(group.map((entry) => this.#deliver(handler, entry)));
    const refusal = await this.#attempt((signal) => handler.deliverMany!(group, signal));
    if (refusal === null) {
      const { store, clock } = this.deps;
      const held = new Set(await store.markDeliveredMany(group.map((entry) => entry.id), this.workerId, clock.nowMs()));
      return group.map((entry) => (held.has(entry.id) ? this.#counted(entry, 'delivered') : null));
    }
    if (this.#abort.signal.aborted) return group.map(() => null);
    if (refusal.kind === 'rejected') return Promise.all(group.map((entry) => this.#deliver(handler, entry)));
    return Promise.all(group.map((entry) => this.#settle(handler, entry, refusal)));
  }

  /** Delivers one claimed entry and records the outcome; null when cut short by stop() or the lease was lost meanwhile. */
  async #deliver(handler: OutboxHandler | undefined, entry: OutboxEntry): Promise<DeliveryOutcome | null> {
    const refusal: DeliveryRefusal | null = handler
      ? await this.#attempt((signal) => handler.deliver(entry, signal))
      : { kind: 'retry', cause: `no outbox handler is registered for target kind "${entry.targetKind}"`.slice(0, 300) };
    // A delivery cut short by stop() is not the receiver's failure: its lease expires and it goes again.
    if (refusal !== null && this.#abort.signal.aborted) return null;
    return this.#settle(handler, entry, refusal);
  }

  /** Runs one exchange with the target: null when it accepted, else its refusal (a throw is a retry). */
  async #attempt(exchange: (signal: AbortSignal) => Promise<void | DeliveryRefusal>): Promise<DeliveryRefusal | null> {
    try {
      return (await exchange(AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#leaseMs / 2)]))) ?? null;
    } catch (err) {
      return { kind: 'retry', cause: describeFailure(err) };
    }
  }

  /**
   * Records what became of an entry: delivered, retried after a backoff (or the target's
   * Retry-After), or dead; a combined entry refused for good goes back as its parts.
   */
  async #settle(handler: OutboxHandler | undefined, entry: OutboxEntry, refusal: DeliveryRefusal | null): Promise<DeliveryOutcome | null> {
    const { store, clock, logger } = this.deps;
    if (refusal === null) return (await store.markDelivered(entry.id, this.workerId, clock.nowMs())) ? this.#counted(entry, 'delivered') : null;
    const error = refusal.cause.slice(0, 300);
    const context = { outboxId: entry.id, targetKind: entry.targetKind, attempts: entry.attempts, error };
    const parts = refusal.kind === 'rejected' ? (handler?.split?.(entry) ?? []) : [];
    if (parts.length > 1) {
      logger.warn({ ...context, parts: parts.length }, 'combined outbox entry refused by its target; its parts go again one by one');
      const nowMs = clock.nowMs();
      return (await store.split(entry.id, this.workerId, parts.map((part) => newOutboxEntry(part, nowMs)))) ? this.#counted(entry, 'retry') : null;
    }
    if (refusal.kind === 'rejected' || entry.attempts >= this.deps.maxAttempts) {
      logger.error(context, refusal.kind === 'rejected' ? 'outbox entry refused by its target; it is dead' : 'outbox entry is dead after its last attempt');
      return (await store.markDead(entry.id, this.workerId, error)) ? this.#counted(entry, 'dead') : null;
    }
    logger.warn(context, 'outbox delivery failed; retrying later');
    const capMs = this.deps.retryCapMs ?? 3_600_000;
    const backoff = outboxBackoffMs(entry.attempts, this.deps.retryBaseMs ?? 1_000, capMs, this.deps.random);
    const delay = Math.max(backoff, Math.min(capMs, refusal.retryAfterMs ?? 0));
    return (await store.reschedule(entry.id, this.workerId, clock.nowMs() + delay, error)) ? this.#counted(entry, 'retry') : null;
  }

  #counted(entry: OutboxEntry, outcome: DeliveryOutcome): DeliveryOutcome {
    this.deps.onOutcome?.(entry.targetKind, outcome);
    return outcome;
  }

  get #coalesceMs(): number {
    return this.deps.coalesceMs ?? DEFAULT_COALESCE_MS;
  }

  #schedule(delayMs: number): void {
    this.#dueAt = performance.now() + delayMs;
    this.#timer = setTimeout(() => {
      this.#dueAt = Number.POSITIVE_INFINITY;
      this.#pass = this.runOnce()
        .then(
          (report) => report.claimed >= (this.deps.batchSize ?? DEFAULT_BATCH_SIZE),
          (err: unknown) => {
            this.deps.logger.error({ err }, 'outbox pass failed');
            return false;
          },
        )
        .then((more) => {
          this.#pass = undefined;
          // A full pass suggests more is due (go on at once); a wake during the pass, that more was committed.
          const delay = more ? 0 : this.#woken ? this.#coalesceMs : (this.deps.pollIntervalMs ?? 1_000);
          this.#woken = false;
          if (!this.#stopped) this.#schedule(delay);
        });
    }, delayMs);
  }
}

/**
 * Delivers outbox messages of one target kind: claims due messages in small groups,
 * hands them to the target's handler, and records each one's outcome. Retries back off
 * exponentially with jitter (or as the receiver's Retry-After says); after the last
 * attempt, or on a refusal that no retry can change, a message is a dead letter.
 * Delivery is at least once: a worker that dies after the receiver accepted and before
 * `sent` was recorded sends the message again, and the receiver deduplicates it by its
 * idempotency key.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { OutboxMessage, OutboxStore } from './outbox.types.js';

export type DeliveryOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; cause: string; retryAfterMs: number | null }
  | { kind: 'rejected'; cause: string };

export interface OutboxHandler {
  /** Which messages it delivers. */
  readonly target: string;
  /** Delivers a group; one outcome for the whole group (one request to the receiver). */
  deliver(messages: readonly OutboxMessage[]): Promise<DeliveryOutcome>;
}

export interface OutboxWorkerOptions {
  store: OutboxStore;
  handler: OutboxHandler;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'error' | 'info'>;
  maxAttempts: number;
  retryBaseMs: number;
  /** Longest wait between two attempts of one message. */
  retryMaxMs?: number;
  /** How often to look for due messages when not woken. */
  pollMs?: number;
  /** How long a wake waits, so that messages enqueued together go in one delivery. */
  wakeDelayMs?: number;
  batchSize?: number;
  onOutcome?(outcome: 'delivered' | 'retry' | 'dead', count: number): void;
}

export class OutboxWorker {
  readonly name: string;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = true;
  #again = false;
  #waking = false;

  constructor(private readonly options: OutboxWorkerOptions) {
    this.name = `outbox:${options.handler.target}`;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#run();
  }

  /** Looks for due messages soon (a message was just enqueued); wakes close together coalesce. */
  wake(): void {
    if (this.#stopped || this.#waking) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    const delay = this.options.wakeDelayMs ?? 0;
    if (delay === 0) return this.#run();
    this.#waking = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#waking = false;
      this.#run();
    }, delay);
    this.#timer.unref();
  }

  #run(): void {
    if (this.#stopped || this.#running) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#running = this.#drain()
      .catch((err: unknown) => this.options.logger.error({ err, target: this.options.handler.target }, 'outbox delivery pass failed'))
      .finally(() => {
        this.#running = null;
        if (this.#stopped) return;
        if (this.#again) {
          this.#again = false;
          this.wake();
        } else this.#schedule();
      });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#waking = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One pass: deliver due messages until none is left. */
  async runOnce(): Promise<void> {
    await this.#drain();
  }

  #schedule(): void {
    this.#timer = setTimeout(() => this.#run(), this.options.pollMs ?? 1_000);
    this.#timer.unref();
  }

  async #drain(): Promise<void> {
    const { store, handler, clock } = this.options;
    const size = this.options.batchSize ?? 50;
    for (;;) {
      const due = await store.claimDue(handler.target, clock.nowMs(), size, this.#leaseMs());
      if (due.length === 0) return;
      await this.#deliver(due);
      if (due.length < size || this.#stopped) return;
    }
  }

  /** A claimed message is not retaken before its delivery could have timed out. */
  #leaseMs(): number {
    return 60_000;
  }

  async #deliver(messages: OutboxMessage[]): Promise<void> {
    const { store, handler, clock } = this.options;
    let outcome: DeliveryOutcome;
    try {
      outcome = await handler.deliver(messages);
    } catch (err) {
      outcome = { kind: 'retry', cause: (err as Error).message, retryAfterMs: null };
    }
    const now = clock.nowMs();
    if (outcome.kind === 'delivered') {
      await store.markSent(messages.map((m) => m.id), now);
      this.options.onOutcome?.('delivered', messages.length);
      return;
    }
    for (const message of messages) {
      const attempts = message.attempts + 1;
      if (outcome.kind === 'rejected' || attempts >= this.options.maxAttempts) {
        await store.markDead(message.id, attempts, outcome.cause);
        this.options.onOutcome?.('dead', 1);
        this.options.logger.error({ outbox_id: message.id, target: message.target, attempts, cause: outcome.cause }, 'outbox message is a dead letter');
      } else {
        await store.markRetry(message.id, attempts, now + this.#delayMs(attempts, outcome.retryAfterMs), outcome.cause);
        this.options.onOutcome?.('retry', 1);
      }
    }
    this.options.logger.warn({ target: handler.target, count: messages.length, cause: outcome.cause }, 'outbox delivery failed');
  }

  /** base · 2^(attempt−1), with full jitter over its upper half, capped; a Retry-After is honoured as a floor. */
  #delayMs(attempts: number, retryAfterMs: number | null): number {
    const { retryBaseMs, retryMaxMs = 300_000 } = this.options;
    const exponential = Math.min(retryMaxMs, retryBaseMs * 2 ** (attempts - 1));
    const jittered = exponential / 2 + Math.random() * (exponential / 2);
    return Math.max(Math.round(jittered), retryAfterMs ?? 0);
  }
}

/**
 * The background-response runner: a BackgroundWorker that any number of processes (or
 * replicas) run against one database, as the batch runner does. Each claims queued
 * responses by lease (BackgroundQueue), renews the leases it holds while their runs go
 * on, and stops a run whose lease it lost or whose response was cancelled (told at once
 * in this process, else at the next renewal). A runner that dies stops renewing; once the
 * lease expires another runner claims the response and reruns or fails it (background-run.ts).
 * stop() drains: no new runs; runs in flight finish (up to `drainMs`, then they stop and
 * their leases are given back).
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { MeterResolver } from '../domain/billing/meter-resolver.js';
import type { BackgroundJob, BackgroundQueue } from '../domain/responses/response-store.port.js';
import type { ResponsesEngine } from '../domain/responses/stored-responses.js';
import type { Clock } from '../domain/shared/clock.js';
import { randomToken } from '../domain/shared/ids.js';
import type { BackgroundWorker } from './background-worker.js';
import { BackgroundRun } from './background-run.js';

export interface BackgroundResponsesDeps {
  queue: BackgroundQueue;
  engine: ResponsesEngine;
  meters: MeterResolver;
  billing: BillingService;
  clock: Clock;
  logger: Logger;
  leaseMs: number;
  maxAttempts: number;
  /** Runs in flight in this process. */
  concurrency: number;
  pollIntervalMs?: number;
  drainMs?: number;
}

export class BackgroundResponsesRunner implements BackgroundWorker {
  readonly name = 'background-responses';
  readonly workerId = `${hostname()}:${process.pid}:${randomToken(6)}`;
  readonly #runs = new Map<string, { run: BackgroundRun; done: Promise<void> }>();
  #stopping = false;
  #loop: Promise<void> | undefined;
  #renewal: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #woken = false;

  constructor(private readonly deps: BackgroundResponsesDeps) {}

  start(): void {
    if (this.#loop || this.#stopping) return;
    this.#renewal = setInterval(() => void this.#renewLeases(), Math.max(100, this.deps.leaseMs / 3));
    this.#loop = this.#runLoop();
  }

  /** Look for work now (a response was queued in this process). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** A response was cancelled in this process: stop its run now if it is here. */
  cancelled(id: string): void {
    this.#runs.get(id)?.run.stop();
  }

  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    if (!this.#loop) return;
    this.wake();
    await this.#loop;
    const drain = setTimeout(() => {
      for (const { run } of this.#runs.values()) run.drain();
    }, this.deps.drainMs ?? 30_000);
    await Promise.allSettled([...this.#runs.values()].map((r) => r.done));
    clearTimeout(drain);
    clearInterval(this.#renewal);
  }

  async #runLoop(): Promise<void> {
    while (!this.#stopping) {
      try {
        while (!this.#stopping && this.#runs.size < this.deps.concurrency) {
          const job = await this.deps.queue.claim(this.workerId, this.deps.clock.nowMs(), this.deps.leaseMs);
          if (!job) break;
          this.#start(job);
        }
      } catch (err) {
        this.deps.logger.error({ err }, 'background response poll failed');
      }
      await this.#idle(this.deps.pollIntervalMs ?? 500);
    }
  }

  #idle(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        this.#woken = false;
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  #start(job: BackgroundJob): void {
    const run = new BackgroundRun(job, { ...this.deps, worker: this.workerId });
    const done = run
      .run()
      .catch(async (err: unknown) => {
        // Settling failed (the database): the lease is given back and the response runs again.
        this.deps.logger.error({ err, responseId: job.id }, 'background response run failed; releasing it');
        await this.deps.queue.release(this.workerId, job.id).catch(() => {});
      })
      .finally(() => {
        this.#runs.delete(job.id);
        this.wake();
      });
    this.#runs.set(job.id, { run, done });
  }

  async #renewLeases(): Promise<void> {
    const ids = [...this.#runs.keys()];
    if (ids.length === 0) return;
    try {
      const kept = await this.deps.queue.renew(this.workerId, ids, this.deps.clock.nowMs(), this.deps.leaseMs);
      for (const id of ids) if (!kept.has(id)) this.#runs.get(id)?.run.stop();
    } catch (err) {
      this.deps.logger.warn({ err }, 'background response lease renewal failed');
    }
  }
}

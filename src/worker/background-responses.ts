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
import { LeaseLoop, type LeasedRun } from './lease-loop.js';

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
  readonly #loop: LeaseLoop<BackgroundJob, BackgroundRun>;

  constructor(private readonly deps: BackgroundResponsesDeps) {
    this.#loop = new LeaseLoop<BackgroundJob, BackgroundRun>({
      leaseMs: deps.leaseMs,
      maxRuns: deps.concurrency,
      pollIntervalMs: deps.pollIntervalMs ?? 500,
      logger: deps.logger,
      messages: { pollFailed: 'background response poll failed', renewalFailed: 'background response lease renewal failed' },
      claim: () => deps.queue.claim(this.workerId, deps.clock.nowMs(), deps.leaseMs),
      idOf: (job) => job.id,
      begin: (job) => this.#begin(job),
      renew: (ids) => deps.queue.renew(this.workerId, ids, deps.clock.nowMs(), deps.leaseMs),
      lost: (run) => run.stop(),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Look for work now (a response was queued in this process). */
  wake(): void {
    this.#loop.wake();
  }

  /** A response was cancelled in this process: stop its run now if it is here. */
  cancelled(id: string): void {
    this.#loop.runOf(id)?.stop();
  }

  async stop(): Promise<void> {
    await this.#loop.stop(this.deps.drainMs ?? 30_000, (runs) => {
      for (const run of runs) run.drain();
    });
  }

  #begin(job: BackgroundJob): LeasedRun<BackgroundRun> {
    const run = new BackgroundRun(job, { ...this.deps, worker: this.workerId });
    const done = run.run().catch(async (err: unknown) => {
      // Settling failed (the database): the lease is given back and the response runs again.
      this.deps.logger.error({ err, responseId: job.id }, 'background response run failed; releasing it');
      await this.deps.queue.release(this.workerId, job.id).catch(() => {});
    });
    return { run, done };
  }
}

/**
 * The janitor: a BackgroundWorker that every process running workers (the server with
 * in-process workers, each `sluice worker`) runs on a timer. A pass
 * 1. ends batches whose creating request died mid-validation (BatchesService), and
 * 2. removes the blobs of deleted and expired files that nothing needs any more
 *    (FilesService; a blob an unfinished batch reads stays until that batch ends), and
 * 3. runs the retention sweeps other features add (`addSweep`: expired stored responses
 *    and their events), and the other steps they add (`addStep`: the spend report's daily
 *    rollups).
 * Each step is a conditional UPDATE, an idempotent delete or a rewrite in one locking
 * transaction, so janitors on several workers and replicas may run at the same time; none
 * needs a lease.
 */
import type { Logger } from 'pino';
import type { BackgroundWorker } from './background-worker.js';
import type { BatchesService } from '../domain/batches/batches.service.js';
import type { FilesService } from '../domain/files/files.service.js';

export interface JanitorDeps {
  files: FilesService;
  batches: BatchesService;
  logger: Logger;
  /** Time between the end of one pass and the start of the next. */
  intervalMs: number;
}

export interface JanitorReport {
  /** Batches ended as interrupted (failed, or cancelled when a cancel was pending). */
  validationsSwept: number;
  blobsPurged: number;
  /** What each added sweep removed (or step did), by its name. */
  swept: Record<string, number>;
}

/** A retention step another feature adds: removes what expired and says how much. */
export interface RetentionSweep {
  readonly name: string;
  sweep(): Promise<number>;
}

/** A step another feature adds: does its work and says how much (what it did, in `done`, is logged when it did any). */
export interface JanitorStep {
  readonly name: string;
  readonly done: string;
  run(): Promise<number>;
}

export class Janitor implements BackgroundWorker {
  readonly name = 'janitor';
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<unknown> | undefined;
  #stopped = false;
  readonly #steps: JanitorStep[] = [];

  constructor(private readonly deps: JanitorDeps) {}

  /** Runs `sweep` on every pass, after the janitor's own steps. */
  addSweep({ name, sweep }: RetentionSweep): void {
    this.#steps.push({ name, done: 'removed expired records', run: sweep });
  }

  /** Runs `step` on every pass, after the janitor's own steps. */
  addStep(step: JanitorStep): void {
    this.#steps.push(step);
  }

  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pass;
  }

  /** One pass, now (tests call it directly instead of waiting for the timer). */
  async runOnce(): Promise<JanitorReport> {
    const report: JanitorReport = { validationsSwept: 0, blobsPurged: 0, swept: {} };
    // Separate steps: a failure of one must not starve the other.
    try {
      const swept = await this.deps.batches.sweepInterruptedValidations();
      report.validationsSwept = swept.length;
      for (const batch of swept) {
        this.deps.logger.warn({ batchId: batch.id, status: batch.status }, 'batch validation was interrupted; batch ended');
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'validation sweep failed');
    }
    try {
      report.blobsPurged = await this.deps.files.purgeRetired();
      if (report.blobsPurged > 0) this.deps.logger.info({ blobs: report.blobsPurged }, 'removed blobs of deleted and expired files');
    } catch (err) {
      this.deps.logger.error({ err }, 'file retention pass failed');
    }
    for (const { name, done, run } of this.#steps) {
      try {
        report.swept[name] = await run();
        if (report.swept[name] > 0) this.deps.logger.info({ [name]: report.swept[name] }, done);
      } catch (err) {
        this.deps.logger.error({ err, sweep: name }, `janitor step ${name} failed`);
      }
    }
    return report;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.#pass = this.runOnce().finally(() => {
        if (!this.#stopped) this.#schedule();
      });
    }, this.deps.intervalMs);
  }
}

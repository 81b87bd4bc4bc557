/**
 * The janitor: a BackgroundWorker that every process running workers (the server with
 * in-process workers, each `sluice worker`) runs on a timer. A pass
 * 1. ends batches whose creating request died mid-validation (BatchesService), and
 * 2. removes the blobs of deleted and expired files that nothing needs any more
 *    (FilesService; a blob an unfinished batch reads stays until that batch ends), and
 * 3. runs the retention sweeps other features add (`addSweep`: expired stored responses
 *    and their events).
 * Each step is a conditional UPDATE or an idempotent delete, so janitors on several
 * workers and replicas may run at the same time; none needs a lease.
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
  /** What each added sweep removed, by its name. */
  swept: Record<string, number>;
}

/** A retention step another feature adds: removes what expired and says how much. */
export interface RetentionSweep {
  readonly name: string;
  sweep(): Promise<number>;
}

export class Janitor implements BackgroundWorker {
  readonly name = 'janitor';
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<unknown> | undefined;
  #stopped = false;
  readonly #sweeps: RetentionSweep[] = [];

  constructor(private readonly deps: JanitorDeps) {}

  /** Runs `sweep` on every pass, after the janitor's own steps. */
  addSweep(sweep: RetentionSweep): void {
    this.#sweeps.push(sweep);
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
    for (const { name, sweep } of this.#sweeps) {
      try {
        report.swept[name] = await sweep();
        if (report.swept[name] > 0) this.deps.logger.info({ [name]: report.swept[name] }, 'removed expired records');
      } catch (err) {
        this.deps.logger.error({ err, sweep: name }, 'retention sweep failed');
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

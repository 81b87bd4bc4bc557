/**
 * The batch runner: a BackgroundWorker that any number of processes (or replicas) run
 * against one database. Each claims shards by lease, renews the leases it holds while
 * working, and finalizes batches whose shards are all done. A runner that dies stops
 * renewing; its shards become claimable after `leaseSeconds` and resume where the
 * recorded line results end. stop() drains: no new lines, in-flight lines finish (up to
 * `drainMs`, then they are aborted and left for another worker), leases are released.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { BatchConfig } from '../config/schema.js';
import type { BackgroundWorker } from './background-worker.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { MeterResolver } from '../domain/billing/meter-resolver.js';
import type { BatchesService } from '../domain/batches/batches.service.js';
import type { FilesService } from '../domain/files/files.service.js';
import type { BatchEndpoints } from '../domain/batches/batch-endpoints.js';
import type { Clock } from '../domain/shared/clock.js';
import { randomToken } from '../domain/shared/ids.js';
import type { Shard } from '../domain/batches/batch.types.js';
import type { BlobStore } from '../domain/files/blob-store.port.js';
import type { BatchesRepository } from '../storage/db/repositories/batches.repository.js';
import type { BatchFinalizationRepository } from '../storage/db/repositories/batch-finalization.repository.js';
import type { BatchLineResultsRepository } from '../storage/db/repositories/batch-line-results.repository.js';
import type { BatchShardsRepository } from '../storage/db/repositories/batch-shards.repository.js';
import { BatchFinalizer } from './batch-finalizer.js';
import { LineExecutor } from './line-executor.js';
import { ResultWriter } from './result-writer.js';
import { Semaphore } from './semaphore.js';
import { ShardRun } from './shard-run.js';

export interface BatchRunnerDeps {
  batches: BatchesRepository;
  /** Status transitions (the batches service). */
  lifecycle: BatchesService;
  shards: BatchShardsRepository;
  results: BatchLineResultsRepository;
  finalization: BatchFinalizationRepository;
  files: FilesService;
  blobs: BlobStore;
  billing: BillingService;
  /** Each line's meter, by its batch's payer. */
  meters: MeterResolver;
  /** The service of each endpoint a batch may use, by url. */
  endpoints: BatchEndpoints;
  clock: Clock;
  logger: Logger;
  config: BatchConfig;
  /** How often an idle runner looks for work (other processes' batches). */
  pollIntervalMs?: number;
  /** How long stop() lets in-flight lines finish before aborting them. */
  drainMs?: number;
}

export class BatchRunner implements BackgroundWorker {
  readonly name = 'batch-runner';
  readonly workerId = `${hostname()}:${process.pid}:${randomToken(6)}`;
  /** What this runner did since it started (shards it finished, shards it handed back). */
  readonly stats = { shardsDone: 0, shardsReleased: 0 };
  readonly #runs = new Map<string, { run: ShardRun; done: Promise<void> }>();
  readonly #batchSlots = new Map<string, { slots: Semaphore; users: number }>();
  readonly #globalSlots: Semaphore;
  readonly #abort = new AbortController();
  readonly #executor: LineExecutor;
  readonly #finalizer: BatchFinalizer;
  readonly #leaseMs: number;
  readonly #maxShards: number;
  #stopping = false;
  #loop: Promise<void> | undefined;
  #renewal: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  /** A wake() that arrived while the loop was busy: the next idle returns at once. */
  #woken = false;

  constructor(private readonly deps: BatchRunnerDeps) {
    const { config } = deps;
    this.#leaseMs = config.leaseSeconds * 1000;
    this.#globalSlots = new Semaphore(config.globalConcurrency);
    // Every line in flight listens on the drain signal (its upstream call, its backoff timer).
    setMaxListeners(Math.max(10, config.globalConcurrency * 4), this.#abort.signal);
    // Enough shards in hand to fill the global concurrency, plus one to read ahead.
    const perShard = Math.max(1, Math.min(config.perBatchConcurrency, config.shardLines));
    this.#maxShards = Math.ceil(config.globalConcurrency / perShard) + 1;
    const writer = new ResultWriter(deps);
    this.#executor = new LineExecutor({ ...deps, writer, maxAttempts: config.maxAttempts, retryBaseMs: config.retryBaseMs });
    this.#finalizer = new BatchFinalizer({ ...deps, owner: this.workerId, leaseMs: this.#leaseMs });
  }

  start(): void {
    if (this.#loop || this.#stopping) return;
    this.#renewal = setInterval(() => void this.#renewLeases(), Math.max(100, this.#leaseMs / 3));
    this.#loop = this.#runLoop();
    this.deps.logger.info({ workerId: this.workerId }, 'batch runner started');
  }

  /** Look for work now (a batch was created or cancelled in this process). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    // Never started (workers off in this process): nothing to drain, nothing to report.
    if (!this.#loop) return;
    this.wake();
    await this.#loop;
    const drain = setTimeout(() => this.#abort.abort(new Error('batch runner drain timed out')), this.deps.drainMs ?? 30_000);
    await Promise.allSettled([...this.#runs.values()].map((r) => r.done));
    clearTimeout(drain);
    clearInterval(this.#renewal);
    this.deps.logger.info({ workerId: this.workerId }, 'batch runner stopped');
  }

  async #runLoop(): Promise<void> {
    while (!this.#stopping) {
      let busy = false;
      try {
        busy = (await this.#finalizer.finalizeReady()) > 0;
        while (!this.#stopping && this.#runs.size < this.#maxShards) {
          const shard = await this.deps.shards.claim(this.workerId, this.deps.clock.nowMs(), this.#leaseMs);
          if (!shard) break;
          this.#startRun(shard);
        }
      } catch (err) {
        this.deps.logger.error({ err }, 'batch runner poll failed');
      }
      if (!busy) await this.#idle(this.deps.pollIntervalMs ?? 500);
    }
  }

  /** Waits for the poll interval, a wake(), or a shard finishing, whichever is first. */
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

  #startRun(shard: Shard): void {
    const batchSlots = this.#slotsOf(shard.batchId);
    const run = new ShardRun(shard, {
      ...this.deps,
      owner: this.workerId,
      executor: this.#executor,
      globalSlots: this.#globalSlots,
      batchSlots,
      stopping: () => this.#stopping,
      signal: this.#abort.signal,
    });
    const done = run
      .run()
      .then(
        (outcome) => {
          if (outcome === 'done') this.stats.shardsDone += 1;
          else this.stats.shardsReleased += 1;
          this.deps.logger.debug({ shard: shard.id, outcome }, 'shard run ended');
        },
        async (err: unknown) => {
          this.deps.logger.error({ err, shard: shard.id }, 'shard run failed; releasing it');
          await this.deps.shards.release(this.workerId, shard.id).catch(() => {});
        },
      )
      .finally(() => {
        this.#runs.delete(shard.id);
        this.#releaseSlotsOf(shard.batchId);
        this.wake();
      });
    this.#runs.set(shard.id, { run, done });
  }

  /** Per-batch concurrency is per process: shards of one batch held here share one semaphore. */
  #slotsOf(batchId: string): Semaphore {
    let entry = this.#batchSlots.get(batchId);
    if (!entry) {
      entry = { slots: new Semaphore(this.deps.config.perBatchConcurrency), users: 0 };
      this.#batchSlots.set(batchId, entry);
    }
    entry.users += 1;
    return entry.slots;
  }

  #releaseSlotsOf(batchId: string): void {
    const entry = this.#batchSlots.get(batchId);
    if (entry && --entry.users === 0) this.#batchSlots.delete(batchId);
  }

  async #renewLeases(): Promise<void> {
    const ids = [...this.#runs.keys()];
    if (ids.length === 0) return;
    try {
      const kept = await this.deps.shards.renew(this.workerId, ids, this.deps.clock.nowMs(), this.#leaseMs);
      for (const id of ids) {
        if (!kept.has(id)) this.#runs.get(id)?.run.markLost();
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'shard lease renewal failed');
    }
  }
}

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
import type {
  BatchFinalizationLeaseStore,
  BatchLineResultStore,
  BatchRunStore,
  BatchShardStore,
} from '../domain/batches/batch-stores.port.js';
import { BatchFinalizer } from './batch-finalizer.js';
import { LineExecutor, type LineExecutorDeps } from './line-executor.js';
import { ResultWriter } from './result-writer.js';
import { Semaphore } from './semaphore.js';
import { ShardRun } from './shard-run.js';
import { LeaseLoop, type LeasedRun } from './lease-loop.js';

export interface BatchRunnerDeps {
  batches: BatchRunStore;
  /** Status transitions (the batches service). */
  lifecycle: BatchesService;
  shards: BatchShardStore;
  results: BatchLineResultStore;
  finalization: BatchFinalizationLeaseStore;
  files: FilesService;
  blobs: BlobStore;
  billing: BillingService;
  /** Each line's meter, by its batch's payer. */
  meters: MeterResolver;
  /** The service of each endpoint a batch may use, by url. */
  endpoints: BatchEndpoints;
  /** Where each line's call is logged. */
  log: LineExecutorDeps['log'];
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
  readonly #batchSlots = new Map<string, { slots: Semaphore; users: number }>();
  readonly #globalSlots: Semaphore;
  readonly #abort = new AbortController();
  readonly #executor: LineExecutor;
  readonly #finalizer: BatchFinalizer;
  readonly #loop: LeaseLoop<Shard, ShardRun>;

  constructor(private readonly deps: BatchRunnerDeps) {
    const { config } = deps;
    const leaseMs = config.leaseSeconds * 1000;
    this.#globalSlots = new Semaphore(config.globalConcurrency);
    // Every line in flight listens on the drain signal (its upstream call, its backoff timer).
    setMaxListeners(Math.max(10, config.globalConcurrency * 4), this.#abort.signal);
    // Enough shards in hand to fill the global concurrency, plus one to read ahead.
    const perShard = Math.max(1, Math.min(config.perBatchConcurrency, config.shardLines));
    const writer = new ResultWriter(deps);
    this.#executor = new LineExecutor({ ...deps, writer, maxAttempts: config.maxAttempts, retryBaseMs: config.retryBaseMs });
    this.#finalizer = new BatchFinalizer({ ...deps, owner: this.workerId, leaseMs });
    this.#loop = new LeaseLoop<Shard, ShardRun>({
      leaseMs,
      maxRuns: Math.ceil(config.globalConcurrency / perShard) + 1,
      pollIntervalMs: deps.pollIntervalMs ?? 500,
      logger: deps.logger,
      messages: { pollFailed: 'batch runner poll failed', renewalFailed: 'shard lease renewal failed' },
      beforeClaims: async () => (await this.#finalizer.finalizeReady()) > 0,
      claim: () => deps.shards.claim(this.workerId, deps.clock.nowMs(), leaseMs),
      idOf: (shard) => shard.id,
      begin: (shard) => this.#begin(shard),
      renew: (ids) => deps.shards.renew(this.workerId, ids, deps.clock.nowMs(), leaseMs),
      lost: (run) => run.markLost(),
    });
  }

  start(): void {
    if (this.#loop.start()) this.deps.logger.info({ workerId: this.workerId }, 'batch runner started');
  }

  /** Look for work now (a batch was created or cancelled in this process). */
  wake(): void {
    this.#loop.wake();
  }

  async stop(): Promise<void> {
    // Never started (workers off in this process): nothing to drain, nothing to report.
    const drained = await this.#loop.stop(this.deps.drainMs ?? 30_000, () =>
      this.#abort.abort(new Error('batch runner drain timed out')),
    );
    if (drained) this.deps.logger.info({ workerId: this.workerId }, 'batch runner stopped');
  }

  #begin(shard: Shard): LeasedRun<ShardRun> {
    const batchSlots = this.#slotsOf(shard.batchId);
    const run = new ShardRun(shard, {
      ...this.deps,
      owner: this.workerId,
      executor: this.#executor,
      globalSlots: this.#globalSlots,
      batchSlots,
      stopping: () => this.#loop.stopping,
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
      .finally(() => this.#releaseSlotsOf(shard.batchId));
    return { run, done };
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
}

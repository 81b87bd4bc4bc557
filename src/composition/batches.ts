/** The Files and Batch APIs: their repositories, services and routes, the batch runner and the janitor. */
import { BatchesService } from '../domain/batches/batches.service.js';
import { FilesService } from '../domain/files/files.service.js';
import { activeTraceParent } from '../observability/batch-tracing.js';
import { BatchFinalizationRepository } from '../storage/db/repositories/batch-finalization.repository.js';
import { BatchLineResultsRepository } from '../storage/db/repositories/batch-line-results.repository.js';
import { BatchShardsRepository } from '../storage/db/repositories/batch-shards.repository.js';
import { BatchesRepository } from '../storage/db/repositories/batches.repository.js';
import { FilesRepository } from '../storage/db/repositories/files.repository.js';
import { UsageRollupsRepository } from '../storage/db/repositories/usage-rollups.repository.js';
import { SpendRollups } from '../domain/billing/spend-rollups.js';
import { BatchRunner } from '../worker/batch-runner.js';
import { Janitor } from '../worker/janitor.js';
import { bindRoutes } from '../http/route-module.js';
import { registerFilesRoutes } from '../http/routes/v1/files.js';
import { registerBatchesRoutes } from '../http/routes/v1/batches.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature } from './feature.js';

export interface BatchesParts {
  files: FilesService;
  batches: BatchesService;
  runner: BatchRunner;
  janitor: Janitor;
  /** The urls a batch can name: the assembled batch endpoints' (the wire formats' and the features'), known once every feature has registered. */
  batchable(): readonly string[];
}

/** How often the janitor runs: every minute, or more often when the validation timeout is short. */
const janitorIntervalMs = (validationTimeoutSeconds: number) => Math.min(60_000, Math.max(1_000, (validationTimeoutSeconds * 1000) / 2));

export function createBatchesFeature(core: CoreInfrastructure & CoreBilling & CoreInference): Feature<BatchesParts> {
  const { config, database, blobs, clock } = core;
  const logger = core.logger.child({ component: 'batches' });
  const repos = {
    files: new FilesRepository(database),
    batches: new BatchesRepository(database),
    shards: new BatchShardsRepository(database),
    results: new BatchLineResultsRepository(database, core.repositories.usage),
    finalization: new BatchFinalizationRepository(database),
  };
  const files = new FilesService({
    files: repos.files,
    blobs,
    clock,
    blobInUse: (blobKey) => repos.batches.activeUsesBlob(blobKey),
    onCollectError: (blobKey, err) => logger.warn({ err, blobKey }, 'could not delete an unused blob'),
  });
  const batches: BatchesService = new BatchesService({
    batches: repos.batches,
    results: repos.results,
    finalization: repos.finalization,
    files: repos.files,
    blobs,
    clock,
    completionWindowSeconds: config.batches.completionWindowSeconds,
    shardLines: config.batches.shardLines,
    endpoints: new Set(config.batches.endpoints),
    // Asked when a batch is created, after every feature has registered its endpoints.
    served: (endpoint) => core.batchEndpoints.get(endpoint)?.served?.() ?? core.batchEndpoints.has(endpoint),
    validationTimeoutSeconds: config.batches.validationTimeoutSeconds,
    onRunnable: () => runner.wake(),
    collectBlob: (blobKey) => files.collectBlob(blobKey),
    // With tracing on, batches keep their creating request's traceparent.
    traceParent: core.traced ? activeTraceParent : undefined,
  });
  const runner = new BatchRunner({
    ...repos,
    lifecycle: batches,
    files,
    blobs,
    billing: core.billing,
    meters: core.meters,
    endpoints: core.batchEndpoints,
    log: core.requestLog,
    clock,
    logger,
    config: config.batches,
  });
  // Read when the routes are mounted, after every feature has registered its endpoints.
  const batchable = () => [...core.batchEndpoints.keys()];
  const janitor = new Janitor({
    files,
    batches,
    logger: core.logger.child({ component: 'janitor' }),
    intervalMs: janitorIntervalMs(config.batches.validationTimeoutSeconds),
  });
  const spendRollups = new SpendRollups(new UsageRollupsRepository(database), clock);
  janitor.addStep({ name: 'spend_rollups', done: 'rolled up days of usage for the spend report', run: () => spendRollups.run() });
  return {
    services: { files, batches, runner, janitor, batchable },
    routes: { api: [bindRoutes(registerFilesRoutes, { files }), bindRoutes(registerBatchesRoutes, { batches, batchable })] },
    workers: [runner, janitor],
  };
}

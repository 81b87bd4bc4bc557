/**
 * Wiring of the Files and Batch APIs for the container: their repositories, the two
 * services the routes use, and the batch runner and janitor the container starts as
 * workers.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import { BatchesService } from '../domain/batches/batches.service.js';
import { FilesService } from '../domain/files/files.service.js';
import type { ChatCompletionsPort } from '../domain/inference/chat-completions.port.js';
import type { Clock } from '../domain/shared/clock.js';
import type { BlobStore } from '../storage/blobs/blob-store.js';
import type { Database } from '../storage/db/database.js';
import { BatchFinalizationRepository } from '../storage/db/repositories/batch-finalization.repository.js';
import { BatchLineResultsRepository } from '../storage/db/repositories/batch-line-results.repository.js';
import { BatchShardsRepository } from '../storage/db/repositories/batch-shards.repository.js';
import { BatchesRepository } from '../storage/db/repositories/batches.repository.js';
import { FilesRepository } from '../storage/db/repositories/files.repository.js';
import type { UsageRepository } from '../storage/db/repositories/usage.repository.js';
import { BatchRunner } from './batch-runner.js';
import { Janitor } from './janitor.js';

export interface FilesAndBatchesDeps {
  config: Readonly<Config>;
  database: Database;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  billing: BillingService;
  usage: UsageRepository;
  chatCompletions: ChatCompletionsPort;
}

export interface FilesAndBatches {
  files: FilesService;
  batches: BatchesService;
  runner: BatchRunner;
  janitor: Janitor;
}

/** How often the janitor runs: every minute, or more often when the validation timeout is short. */
const janitorIntervalMs = (validationTimeoutSeconds: number) => Math.min(60_000, Math.max(1_000, (validationTimeoutSeconds * 1000) / 2));

export function createFilesAndBatches(deps: FilesAndBatchesDeps): FilesAndBatches {
  const { config, database, blobs, clock } = deps;
  const logger = deps.logger.child({ component: 'batches' });
  const repos = {
    files: new FilesRepository(database),
    batches: new BatchesRepository(database),
    shards: new BatchShardsRepository(database),
    results: new BatchLineResultsRepository(database, deps.usage),
    finalization: new BatchFinalizationRepository(database),
  };
  const files = new FilesService({
    files: repos.files,
    blobs,
    clock,
    blobInUse: (blobKey) => repos.batches.activeUsesBlob(blobKey),
    onCollectError: (blobKey, err) => logger.warn({ err, blobKey }, 'could not delete an unused blob'),
  });
  const runner = new BatchRunner({
    ...repos,
    files,
    blobs,
    billing: deps.billing,
    chatCompletions: deps.chatCompletions,
    clock,
    logger,
    config: config.batches,
  });
  const batches = new BatchesService({
    batches: repos.batches,
    results: repos.results,
    files: repos.files,
    blobs,
    clock,
    completionWindowSeconds: config.batches.completionWindowSeconds,
    shardLines: config.batches.shardLines,
    validationTimeoutSeconds: config.batches.validationTimeoutSeconds,
    onRunnable: () => runner.wake(),
    collectBlob: (blobKey) => files.collectBlob(blobKey),
  });
  const janitor = new Janitor({
    files,
    batches,
    logger: deps.logger.child({ component: 'janitor' }),
    intervalMs: janitorIntervalMs(config.batches.validationTimeoutSeconds),
  });
  return { files, batches, runner, janitor };
}

/**
 * Stored responses, wholly: the store and the background queue (database rows shared by
 * every replica and worker), POST /v1/responses (it stores, continues and queues; bound
 * into the core's late slot, so /v1 and the gateway serve it with the other wire
 * routes), the retrieval routes, the background runner and the janitor's sweep
 * of expired responses.
 */
import type { Config } from '../config/schema.js';
import type { ModelRegistry } from '../inference/registry.js';
import type { ResponsesService } from '../domain/responses/responses.service.js';
import type { MeterResolver } from '../domain/billing/meter-resolver.js';
import type { Clock } from '../domain/shared/clock.js';
import { StoredResponsesAccess } from '../domain/responses/stored-access.js';
import { StoredResponsesService, type ResponsesEngine } from '../domain/responses/stored-responses.js';
import { bindRoutes } from '../http/route-module.js';
import { registerStoredResponsesRoutes } from '../http/routes/v1/stored-responses.js';
import type { Database } from '../storage/db/database.js';
import { BackgroundResponsesRepository } from '../storage/db/repositories/background-responses.repository.js';
import { ResponsesRepository } from '../storage/db/repositories/responses.repository.js';
import type { UsageRepository } from '../storage/db/repositories/usage.repository.js';
import { BackgroundResponsesRunner } from '../worker/background-responses.js';
import { responsesWriter } from '../wire/responses/writer.js';
import type { BatchesParts } from './batches.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature, Peers } from './feature.js';

const DAY_MS = 86_400_000;
/** Expired responses removed per janitor pass (the next pass takes the rest). */
const SWEEP_LIMIT = 1_000;

export interface StoredResponsesParts {
  store: ResponsesRepository;
  queue: BackgroundResponsesRepository;
  engine: ResponsesEngine;
  /** POST /v1/responses: stores, continues, queues. */
  service: StoredResponsesService;
}

interface StoredResponsesDeps {
  config: Readonly<Config>;
  database: Database;
  usage: UsageRepository;
  responses: ResponsesService;
  registry: ModelRegistry;
  meters: MeterResolver;
  clock: Clock;
}

/** POST /v1/responses and what it stores to: the store, the background queue and the service. */
function createStoredResponses(deps: StoredResponsesDeps): StoredResponsesParts {
  const store = new ResponsesRepository(deps.database);
  const queue = new BackgroundResponsesRepository(deps.database, deps.usage);
  const engine = deps.responses;
  const service = new StoredResponsesService({
    engine,
    writer: responsesWriter,
    store,
    models: deps.registry,
    clock: deps.clock,
    retentionMs: deps.config.responses.retentionDays * DAY_MS,
    runsInBackground: (kind) => deps.meters.serves(kind),
  });
  return { store, queue, engine, service };
}

export interface ResponsesParts {
  stored: StoredResponsesParts;
  access: StoredResponsesAccess;
  runner: BackgroundResponsesRunner;
}

export function createResponsesFeature(
  core: CoreInfrastructure & CoreBilling & CoreInference,
  earlier: Peers<{ batches: BatchesParts }>,
): Feature<ResponsesParts> {
  const { clock, config } = core;
  const stored = createStoredResponses({
    config, database: core.database, usage: core.repositories.usage, responses: core.inference.responses, registry: core.registry, meters: core.meters, clock,
  });
  const { store, queue, engine, service } = stored;
  core.storedResponsesService.bind(service);
  const access = new StoredResponsesAccess({ store, queue, clock });
  const runner = new BackgroundResponsesRunner({
    queue,
    engine,
    meters: core.meters,
    billing: core.billing,
    clock,
    logger: core.logger.child({ component: 'background-responses' }),
    leaseMs: config.batches.leaseSeconds * 1000,
    maxAttempts: config.responses.maxAttempts,
    concurrency: config.batches.globalConcurrency,
  });
  service.onQueued(() => runner.wake());
  access.onCancelled((id) => runner.cancelled(id));
  earlier.batches.services.janitor.addSweep({ name: 'responses', sweep: () => store.sweepExpired(clock.nowMs(), SWEEP_LIMIT) });
  return {
    services: { stored, access, runner },
    routes: { api: [bindRoutes(registerStoredResponsesRoutes, { stored: access })] },
    workers: [runner],
  };
}

/**
 * The composition root: builds every long-lived object once, from a Config, and closes
 * them all in reverse order. The HTTP server, the worker process and the CLI share it.
 */
import pino, { type Logger } from 'pino';
import { sql } from 'kysely';
import type { Config } from './config/schema.js';
import { openDatabase, type Database } from './storage/db/database.js';
import { migrateToLatest, pendingMigrations } from './storage/db/migrate.js';
import { ProjectsRepository } from './storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from './storage/db/repositories/api-keys.repository.js';
import { UsageRepository } from './storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from './storage/db/repositories/usage-reports.repository.js';
import { CreditGrantsRepository } from './storage/db/repositories/credit-grants.repository.js';
import { createBlobStore } from './storage/blobs/create-blob-store.js';
import type { BlobStore } from './domain/files/blob-store.port.js';
import { createRateLimiter, type RateLimiter } from './storage/rate-limit/rate-limiter.js';
import { ApiKeyAuthenticator } from './domain/identity/authenticator.js';
import { ProjectsService } from './domain/projects/projects.service.js';
import { BillingService } from './domain/billing/billing.service.js';
import { CreditMeter } from './domain/billing/credit-meter.js';
import { ReservationBook } from './domain/billing/reservations.js';
import { systemClock, type Clock } from './domain/shared/clock.js';
import { Metrics } from './observability/metrics.js';
import type { ChatCompletionsPort } from './domain/completions/chat-completions.port.js';
import { probeSharedDependencies, warnIfRedisUnreachable } from './observability/dependency-probes.js';
import { startTracing, type Tracing } from './observability/tracing.js';
import { activeTraceParent } from './observability/batch-tracing.js';
import { TracingBlobStore } from './observability/tracing-blob-store.js';
import { traceBackendFactories, traceBilling } from './observability/trace-decorators.js';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createInferenceServices, type InferenceServices } from './domain/completions/index.js';
import { BACKEND_FACTORIES, ModelRegistry } from './inference/registry.js';
import { createOnnxBackend } from './inference/backends/onnx/index.js';
import { DecisionService } from './domain/decision/decision.service.js';
import { PackDecisionScorer } from './inference/decision/pack-decision-scorer.js';
import { TranscriptionService } from './domain/audio/transcription.service.js';
import { FfmpegDecoder } from './adapters/ffmpeg/ffmpeg-decoder.js';
import { FilesService } from './domain/files/files.service.js';
import { BatchesService } from './domain/batches/batches.service.js';
import { BatchFinalizationRepository } from './storage/db/repositories/batch-finalization.repository.js';
import { BatchLineResultsRepository } from './storage/db/repositories/batch-line-results.repository.js';
import { BatchShardsRepository } from './storage/db/repositories/batch-shards.repository.js';
import { BatchesRepository } from './storage/db/repositories/batches.repository.js';
import { FilesRepository } from './storage/db/repositories/files.repository.js';
import type { BackgroundWorker } from './worker/background-worker.js';
import { BatchRunner } from './worker/batch-runner.js';
import { Janitor } from './worker/janitor.js';
import { createGateway, type Gateway } from './composition/gateway.js';
import { createConsoleParts, type ConsoleParts } from './composition/console.js';
import { createStorefront, ensureStorefrontProjects, storefrontDebits, type Storefront } from './composition/storefront.js';
import type { MeterResolver } from './domain/billing/meter-resolver.js';
import { createLineMeters, createOutbox, type Outbox } from './composition/outbox.js';

export type { BackgroundWorker };

export interface ContainerOverrides {
  database?: Database;
  blobs?: BlobStore;
  clock?: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** Replace the OTLP exporter when tracing is on (tests: an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
  /** Per upstream model: `reachable` or `unreachable since <time> (<code>)`. Informs only: never makes the replica not ready. */
  upstreams: Record<string, string>;
  /** Per in-process runtime a model's files are pulled for but which is not installed: what is missing and its command. Informs only. */
  runtimes: Record<string, string>;
}

export interface Container {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  database: Database;
  blobs: BlobStore;
  rateLimiter: RateLimiter;
  repositories: { projects: ProjectsRepository; keys: ApiKeysRepository; usage: UsageRepository };
  authenticator: ApiKeyAuthenticator;
  projects: ProjectsService;
  billing: BillingService;
  /** The meter of calls paid from project credit (API keys, batch lines). */
  creditMeter: CreditMeter;
  /** The meter of each batch line, by its batch's payer kind (features register theirs). */
  meters: MeterResolver;
  /** The settlement outbox: its store, handlers by target kind (features register theirs) and deliverer. */
  outbox: Outbox;
  /** The synchronous chat-completions path, shared by the route and the batch runner. */
  chatCompletions: ChatCompletionsPort;
  /** Model id → configuration and backend. */
  registry: ModelRegistry;
  /** The synchronous inference routes' services (chat completions, responses, embeddings, moderations). */
  inference: InferenceServices;
  /** POST /v1/systemone. */
  decision: DecisionService;
  /** Speech to text (the audio transcription and translation routes). */
  transcription: TranscriptionService;
  /** Files and Batch APIs; their runner and janitor are in `workers`. */
  files: FilesService;
  batches: BatchesService;
  /** The signed gateway (`/gateway/v1`): verifier, intermediary meter, its outbox handler. */
  gateway: Gateway;
  /** The web console's sessions and sign-in limiter. */
  console: ConsoleParts;
  workers: BackgroundWorker[];
  /** The agent storefront (src/composition/storefront.ts); null when no plan is configured. */
  storefront: Storefront | null;
  startWorkers(): void;
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.key'], censor: '[redacted]' },
  });
}

/** Builds everything and applies pending migrations. */
export async function createContainer(config: Readonly<Config>, overrides: ContainerOverrides = {}): Promise<Container> {
  const logger = overrides.logger ?? createLogger(config);
  const clock = overrides.clock ?? systemClock;
  const metrics = overrides.metrics ?? new Metrics();
  const tracing: Tracing | null = config.tracing.enabled ? startTracing(config.tracing, overrides.spanProcessors) : null;
  const database = overrides.database ?? openDatabase(config.database);
  await migrateToLatest(database);

  const repositories = {
    projects: new ProjectsRepository(database),
    keys: new ApiKeysRepository(database),
    usage: new UsageRepository(database, storefrontDebits(config.storefront, database)),
  };
  const untracedBlobs = overrides.blobs ?? createBlobStore(config.blobs);
  const blobs = tracing ? new TracingBlobStore(untracedBlobs, config.blobs.kind) : untracedBlobs;
  const rateLimiter = createRateLimiter({
    requestsPerMinute: config.rateLimit.requestsPerMinute,
    redisUrl: config.redisUrl,
    keyPrefix: config.rateLimit.redisPrefix,
  });
  const probeTargets = { blobs, rateLimiter, redisConfigured: config.redisUrl !== null, logger };
  void warnIfRedisUnreachable(probeTargets);
  const authenticator = new ApiKeyAuthenticator(repositories.keys, clock, config.auth.cacheTtlMs);
  const projects = new ProjectsService({ ...repositories, reports: new UsageReportsRepository(database), grants: new CreditGrantsRepository(database), authenticator, clock, freeCreditsMicros: config.billing.freeCreditsMicros });
  const priceOf = (model: string) => config.models[model]?.price ?? { inputPerMillionUsd: 0, outputPerMillionUsd: 0 };
  const outbox = createOutbox({ config, database, clock, logger, metrics });
  const billing = new BillingService(repositories.projects, repositories.usage, priceOf, clock, {
    observe: (record) => {
      metrics.usageTokens.inc([record.model, 'input'], record.inputTokens);
      metrics.usageTokens.inc([record.model, 'output'], record.outputTokens);
      metrics.usageCostMicros.inc([record.model], record.costMicros);
    },
    // Settlement messages are written leased to this process's deliverer, which sends them from memory.
    outbox: outbox.deliverer,
  });
  if (tracing) traceBilling(billing);

  const backendFactories: typeof BACKEND_FACTORIES = {
    ...BACKEND_FACTORIES,
    onnx: (deps) => createOnnxBackend(deps, { onEmbeddingBatch: (model, size) => metrics.embeddingBatchSize.observe({ model }, size) }),
  };
  const registry = new ModelRegistry(config, logger, tracing ? traceBackendFactories(backendFactories) : backendFactories);
  const reservations = new ReservationBook();
  const creditMeter = new CreditMeter(billing, reservations, config.billing);
  const meters = createLineMeters(creditMeter);
  const inference = createInferenceServices({ registry, clock, logger });
  const chatCompletions: ChatCompletionsPort = inference.chatCompletions;
  const decision = new DecisionService(registry, new PackDecisionScorer(registry, { byModel: config.decision.scorers, nliModel: config.decision.nliModel, llmModel: config.decision.llmModel }), config.decision);
  const transcription = new TranscriptionService({
    registry,
    decoder: new FfmpegDecoder(),
    onAudio: (model, route, seconds) => metrics.audioSeconds.inc({ model, route }, seconds),
  });

  const { files, batches, runner, janitor } = createFilesAndBatches({
    config, database, blobs, clock, logger, billing, meters, usage: repositories.usage, chatCompletions, traced: tracing !== null,
  });
  const gateway = await createGateway({ config, billing, projects, outbox, clock, logger, metrics });
  const consoleParts = createConsoleParts({ config, database, authenticator, clock });
  const workers: BackgroundWorker[] = [runner, janitor, outbox.deliverer];
  let workersStarted = false;
  const storefront = createStorefront(config.storefront, {
    database, clock, logger, reservations, redisUrl: config.redisUrl, redisPrefix: config.rateLimit.redisPrefix,
  });
  await ensureStorefrontProjects(storefront, projects);

  return {
    config,
    logger,
    clock,
    metrics,
    database,
    blobs,
    rateLimiter,
    repositories,
    authenticator,
    projects,
    billing,
    creditMeter,
    meters,
    outbox,
    chatCompletions,
    registry,
    inference,
    decision,
    transcription,
    files,
    batches,
    gateway,
    console: consoleParts,
    workers,
    storefront,
    startWorkers() {
      if (workersStarted) return;
      workersStarted = true;
      for (const worker of workers) worker.start();
    },
    async readiness() {
      const checks: Record<string, string> = {};
      try {
        await sql`select 1`.execute(database.db);
        checks.database = 'ok';
        const pending = await pendingMigrations(database);
        checks.migrations = pending.length === 0 ? 'ok' : `pending: ${pending.join(', ')}`;
      } catch (err) {
        checks.database = `unreachable: ${(err as Error).message}`;
      }
      const [shared, upstreams, runtimes] = await Promise.all([probeSharedDependencies(probeTargets), upstreamReadiness(registry), missingRuntimes(registry)]);
      Object.assign(checks, shared);
      return { ready: Object.values(checks).every((c) => c === 'ok'), checks, upstreams, runtimes };
    },
    async close() {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await gateway.close();
      await rateLimiter.close();
      await consoleParts.signInLimiter.close();
      await storefront?.limiter.close();
      if (!overrides.blobs) await blobs.close?.();
      await registry.close();
      await database.close();
      await tracing?.shutdown();
    },
  };
}

/** How often the janitor runs: every minute, or more often when the validation timeout is short. */
const janitorIntervalMs = (validationTimeoutSeconds: number) => Math.min(60_000, Math.max(1_000, (validationTimeoutSeconds * 1000) / 2));

interface FilesAndBatchesDeps {
  config: Readonly<Config>;
  database: Database;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  billing: BillingService;
  meters: MeterResolver;
  usage: UsageRepository;
  chatCompletions: ChatCompletionsPort;
  /** Tracing is on: batches keep their creating request's traceparent. */
  traced: boolean;
}

/** The Files and Batch APIs: their repositories, services, the batch runner and the janitor. */
function createFilesAndBatches(deps: FilesAndBatchesDeps) {
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
  const batches: BatchesService = new BatchesService({
    batches: repos.batches,
    results: repos.results,
    finalization: repos.finalization,
    files: repos.files,
    blobs,
    clock,
    completionWindowSeconds: config.batches.completionWindowSeconds,
    shardLines: config.batches.shardLines,
    validationTimeoutSeconds: config.batches.validationTimeoutSeconds,
    onRunnable: () => runner.wake(),
    collectBlob: (blobKey) => files.collectBlob(blobKey),
    traceParent: deps.traced ? activeTraceParent : undefined,
  });
  const runner = new BatchRunner({
    ...repos,
    lifecycle: batches,
    files,
    blobs,
    billing: deps.billing,
    meters: deps.meters,
    chatCompletions: deps.chatCompletions,
    clock,
    logger,
    config: config.batches,
  });
  const janitor = new Janitor({
    files,
    batches,
    logger: deps.logger.child({ component: 'janitor' }),
    intervalMs: janitorIntervalMs(config.batches.validationTimeoutSeconds),
  });
  return { files, batches, runner, janitor };
}

/** What the last probe of each upstream model found (probing the stale ones first). */
async function upstreamReadiness(registry: ModelRegistry): Promise<Record<string, string>> {
  await registry.refreshUpstreams();
  const upstreams: Record<string, string> = {};
  for (const model of registry.list()) {
    if (model.binding.backend !== 'openai' || !model.binding.baseUrl) continue;
    const { unreachable } = await registry.status(model);
    upstreams[model.id] = unreachable ? `unreachable since ${unreachable.since} (${unreachable.reason})` : 'reachable';
  }
  return upstreams;
}

/** The runtimes that stand between a pulled in-process model and its first call, e.g. `gguf: GGUF runtime not installed: run …`. */
async function missingRuntimes(registry: ModelRegistry): Promise<Record<string, string>> {
  const missing: Record<string, string> = {};
  for (const model of registry.list()) {
    if (model.binding.backend === 'openai') continue;
    const status = await registry.status(model);
    if (status.missingRuntime) missing[status.missingRuntime] = `${status.publicDetail ?? status.detail}: ${status.remedy ?? 'see the server log'}`;
  }
  return missing;
}

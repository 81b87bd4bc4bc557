/**
 * The core every feature builds on: the database (migrated), blob storage, rate limiting,
 * API keys and projects, billing and its meters, the settlement outbox, the model
 * registry and the inference services; the /v1 and admin scopes that mount every
 * feature's shared routes, and the core's own route modules.
 */
import pino, { type Logger } from 'pino';
import { sql } from 'kysely';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config/schema.js';
import { openDatabase, type Database } from '../storage/db/database.js';
import { migrateToLatest, pendingMigrations } from '../storage/db/migrate.js';
import { ProjectsRepository } from '../storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from '../storage/db/repositories/api-keys.repository.js';
import { PostgresKeyRevocationFeed } from '../storage/db/key-revocation-feed.js';
import { UsageRepository, type PayerDebit } from '../storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from '../storage/db/repositories/usage-reports.repository.js';
import { CreditGrantsRepository } from '../storage/db/repositories/credit-grants.repository.js';
import { createBlobStore } from '../storage/blobs/create-blob-store.js';
import type { BlobStore } from '../domain/files/blob-store.port.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { ApiKeyAuthenticator } from '../domain/identity/authenticator.js';
import type { PayerKind } from '../domain/identity/caller.js';
import { ProjectsService } from '../domain/projects/projects.service.js';
import { BillingService } from '../domain/billing/billing.service.js';
import { CreditMeter } from '../domain/billing/credit-meter.js';
import type { MeterResolver } from '../domain/billing/meter-resolver.js';
import { ReservationBook } from '../domain/billing/reservations.js';
import { systemClock, type Clock } from '../domain/shared/clock.js';
import type { TokenPrice } from '../domain/shared/money.js';
import { Metrics, routingMetricsOf } from '../observability/metrics.js';
import type { Readiness } from '../http/routes/ops.js';
import { probeSharedDependencies, warnIfRedisUnreachable } from '../observability/dependency-probes.js';
import { startTracing, type Tracing } from '../observability/tracing.js';
import { gatheringLogDestination } from '../observability/log-destination.js';
import { TracingBlobStore } from '../observability/tracing-blob-store.js';
import { traceBackendFactories, traceBilling } from '../observability/trace-decorators.js';
import { createInferenceServices, type InferenceServices } from '../domain/completions/index.js';
import { inferenceBatchEndpoints } from '../domain/completions/batch-endpoints.js';
import type { BatchEndpoint } from '../domain/batches/batch-endpoints.js';
import { BACKEND_FACTORIES, ModelRegistry } from '../inference/registry.js';
import { createOnnxBackend } from '../inference/backends/onnx/index.js';
import { createUpstreamBackend } from '../inference/upstream/upstream-backend.js';
import type { UpstreamProtocolEntry } from '../inference/upstream/protocol.js';
import { TranscriptionService } from '../domain/audio/transcription.service.js';
import { FfmpegDecoder } from '../adapters/ffmpeg/ffmpeg-decoder.js';
import { bindRoutes, type BoundRoutes } from '../http/route-module.js';
import type { ScopeRateLimit } from '../http/scope-policy.js';
import { v1Scope } from '../http/scopes/v1.js';
import { adminScope } from '../http/scopes/admin.js';
import { registerChatCompletionsRoute } from '../http/routes/v1/chat-completions.js';
import { registerCompletionsRoute } from '../http/routes/v1/completions.js';
import { registerResponsesRoute } from '../http/routes/v1/responses.js';
import { registerEmbeddingsRoute } from '../http/routes/v1/embeddings.js';
import { registerModerationsRoute } from '../http/routes/v1/moderations.js';
import { registerModelsRoutes } from '../http/routes/v1/models.js';
import { registerAudioRoutes } from '../http/routes/v1/audio.js';
import { registerUsageRoutes } from '../http/routes/v1/usage.js';
import { registerCatalogRoute } from '../http/routes/v1/catalog.js';
import { registerAdminRoutes } from '../http/routes/admin/index.js';
import { registerOutboxAdmin } from '../http/routes/admin/outbox.js';
import type { Feature } from './feature.js';
import { createLineMeters, createOutbox, type Outbox } from './outbox.js';
import { createStoredResponses, type StoredResponsesParts } from './responses.js';

export interface CoreOverrides {
  database?: Database;
  blobs?: BlobStore;
  clock?: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** Replace the OTLP exporter when tracing is on (tests: an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  /** The upstream protocols models may speak (default: this build's; tests add a fixture protocol). */
  upstreamProtocols?: readonly UpstreamProtocolEntry[];
}

export interface CoreServices {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  /** Tracing is on. */
  traced: boolean;
  database: Database;
  blobs: BlobStore;
  rateLimiter: RateLimiter;
  /** Requests per minute per API key: the limit of /v1, the admin API and the console. */
  apiKeyRateLimit: ScopeRateLimit;
  repositories: { projects: ProjectsRepository; keys: ApiKeysRepository; usage: UsageRepository };
  authenticator: ApiKeyAuthenticator;
  projects: ProjectsService;
  billing: BillingService;
  /** The meter of calls paid from project credit (API keys, batch lines). */
  creditMeter: CreditMeter;
  /** Credit held by calls in flight, shared by every meter that draws on a balance. */
  reservations: ReservationBook;
  /** The meter of each batch line, by its batch's payer kind (features register theirs). */
  meters: MeterResolver;
  /** The debit of each payer kind other than `project`, written with its usage records (features register theirs). */
  payerDebits: Map<PayerKind, PayerDebit>;
  /** The settlement outbox: its store, handlers by target kind (features register theirs) and deliverer. */
  outbox: Outbox;
  /** Model id → configuration and backend. */
  registry: ModelRegistry;
  /** The price of a model's tokens (zero for a model without one). */
  priceOf(model: string): TokenPrice;
  inference: InferenceServices;
  /** POST /v1/responses with storing, continuations and background mode, and the stores behind them. */
  storedResponses: StoredResponsesParts;
  /** The service of each endpoint a batch may use, by url: the inference routes' (features register theirs). */
  batchEndpoints: Map<string, BatchEndpoint>;
  /** Speech to text (the audio transcription and translation routes). */
  transcription: TranscriptionService;
  /** Core route modules that other scopes mount too (the gateway, the storefront's chat). */
  routes: { chatCompletions: BoundRoutes; responses: BoundRoutes; embeddings: BoundRoutes };
  /** Per upstream model: `reachable` or `unreachable since …`, for /readyz. */
  upstreams(): Promise<Pick<Readiness, 'upstreams' | 'deployments'>>;
  /** The in-process runtimes pulled models need and this install lacks. */
  missingRuntimes(): Promise<Record<string, string>>;
}

export type Core = Feature<CoreServices>;

/** The server's logger: JSON lines on stdout, gathered and written off the main thread (log-destination.ts). */
export function createLogger(config: Config): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.key'], censor: '[redacted]' },
    },
    gatheringLogDestination(1),
  );
}

/** Builds the core and applies pending migrations. */
export async function createCore(config: Readonly<Config>, overrides: CoreOverrides = {}): Promise<Core> {
  const logger = overrides.logger ?? createLogger(config);
  const clock = overrides.clock ?? systemClock;
  const metrics = overrides.metrics ?? new Metrics();
  const tracing: Tracing | null = config.tracing.enabled ? startTracing(config.tracing, overrides.spanProcessors) : null;
  const database = overrides.database ?? openDatabase(config.database);
  await migrateToLatest(database);

  const payerDebits = new Map<PayerKind, PayerDebit>();
  const repositories = { projects: new ProjectsRepository(database), keys: new ApiKeysRepository(database), usage: new UsageRepository(database, payerDebits) };
  const untracedBlobs = overrides.blobs ?? createBlobStore(config.blobs);
  const blobs = tracing ? new TracingBlobStore(untracedBlobs, config.blobs.kind) : untracedBlobs;
  const rateLimiter = createRateLimiter({ requestsPerMinute: config.rateLimit.requestsPerMinute, redisUrl: config.redisUrl, keyPrefix: config.rateLimit.redisPrefix });
  const probeTargets = { blobs, rateLimiter, redisConfigured: config.redisUrl !== null, logger };
  void warnIfRedisUnreachable(probeTargets);
  const authenticator = new ApiKeyAuthenticator(repositories.keys, clock, config.auth.cacheTtlMs);
  const revocations = config.database.kind === 'postgres' ? new PostgresKeyRevocationFeed(config.database.url, logger) : null;
  revocations?.start({ revoked: (keyHash) => authenticator.forget(keyHash), live: (listening) => authenticator.feedListening(listening) });
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
  const projects = new ProjectsService({
    ...repositories, reports: new UsageReportsRepository(database), grants: new CreditGrantsRepository(database), authenticator, balances: billing, clock,
    freeCreditsMicros: config.billing.freeCreditsMicros,
  });

  const registry = createRegistry(config, logger, metrics, tracing !== null, overrides.upstreamProtocols);
  const reservations = new ReservationBook();
  const creditMeter = new CreditMeter(billing, reservations, config.billing);
  const inference = createInferenceServices({ registry, clock, logger });
  const meters = createLineMeters(creditMeter);
  const storedResponses = createStoredResponses({ config, database, usage: repositories.usage, responses: inference.responses, registry, meters, clock });
  const transcription = new TranscriptionService({
    registry,
    decoder: new FfmpegDecoder(),
    onAudio: (model, route, seconds) => metrics.audioSeconds.inc({ model, route }, seconds),
  });
  const apiKeyRateLimit = { limiter: rateLimiter, requestsPerMinute: config.rateLimit.requestsPerMinute };
  const routes = {
    chatCompletions: bindRoutes(registerChatCompletionsRoute, { chat: inference.chatCompletions }),
    responses: bindRoutes(registerResponsesRoute, { responses: storedResponses.service }),
    embeddings: bindRoutes(registerEmbeddingsRoute, { embeddings: inference.embeddings }),
  };

  return {
    services: {
      config, logger, clock, metrics, traced: tracing !== null, database, blobs, rateLimiter, apiKeyRateLimit, repositories, authenticator, projects,
      billing, creditMeter, reservations, meters, payerDebits, outbox, registry, priceOf, inference, storedResponses, transcription, routes,
      batchEndpoints: inferenceBatchEndpoints(inference, registry),
      upstreams: () => upstreamReadiness(registry),
      missingRuntimes: () => missingRuntimes(registry),
    },
    routes: {
      api: [
        routes.chatCompletions,
        bindRoutes(registerCompletionsRoute, { completions: inference.completions }),
        routes.responses,
        routes.embeddings,
        bindRoutes(registerModerationsRoute, { moderations: inference.moderations }),
        bindRoutes(registerModelsRoutes, { registry }),
        bindRoutes(registerAudioRoutes, { transcription }),
        bindRoutes(registerUsageRoutes, { projects, clock }),
        bindRoutes(registerCatalogRoute, { registry }),
      ],
      admin: [bindRoutes(registerAdminRoutes, { projects, clock }), bindRoutes(registerOutboxAdmin, { outbox: outbox.service })],
    },
    scopes: (shared) => [
      adminScope({ adminToken: config.adminToken, meter: creditMeter, rateLimit: apiKeyRateLimit }, shared.admin),
      v1Scope({ authenticator, creditMeter, rateLimit: apiKeyRateLimit }, shared.api),
    ],
    workers: [outbox.deliverer],
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
      return { ...checks, ...(await probeSharedDependencies(probeTargets)) };
    },
    async close() {
      await revocations?.close();
      await rateLimiter.close();
      if (!overrides.blobs) await blobs.close?.();
      await registry.close();
      await database.close();
      await tracing?.shutdown();
    },
  };
}

function createRegistry(config: Readonly<Config>, logger: Logger, metrics: Metrics, traced: boolean, protocols?: readonly UpstreamProtocolEntry[]): ModelRegistry {
  const backendFactories: typeof BACKEND_FACTORIES = {
    ...BACKEND_FACTORIES,
    onnx: (deps) => createOnnxBackend(deps, { onEmbeddingBatch: (model, size) => metrics.embeddingBatchSize.observe({ model }, size) }),
    upstream: (deps) => createUpstreamBackend(deps, { metrics: routingMetricsOf(metrics) }),
  };
  return new ModelRegistry(config, logger, { factories: traced ? traceBackendFactories(backendFactories) : backendFactories, protocols });
}

/** What the last probe of each upstream model found (probing the stale ones first), and the state of each deployment of the models that list several. */
async function upstreamReadiness(registry: ModelRegistry): Promise<Pick<Readiness, 'upstreams' | 'deployments'>> {
  await registry.refreshUpstreams();
  const upstreams: Record<string, string> = {};
  const deployments: Record<string, string> = {};
  for (const model of registry.list()) {
    if (!model.binding.upstream || !model.binding.baseUrl) continue;
    const status = await registry.status(model);
    upstreams[model.id] = status.unreachable ? `unreachable since ${status.unreachable.since} (${status.unreachable.reason})` : 'reachable';
    if (model.binding.deployments.length < 2) continue;
    for (const d of status.deployments ?? []) {
      deployments[d.id] = d.state === 'cooling_down' ? `cooling down until ${d.until}` : d.state === 'unreachable' ? `unreachable since ${d.since} (${d.reason})` : 'ready';
    }
  }
  return { upstreams, deployments };
}

/** The runtimes that stand between a pulled in-process model and its first call, e.g. `gguf: GGUF runtime not installed: run …`. */
async function missingRuntimes(registry: ModelRegistry): Promise<Record<string, string>> {
  const missing: Record<string, string> = {};
  for (const model of registry.list()) {
    if (model.binding.upstream) continue;
    const status = await registry.status(model);
    if (status.missingRuntime) missing[status.missingRuntime] = `${status.publicDetail ?? status.detail}: ${status.remedy ?? 'see the server log'}`;
  }
  return missing;
}

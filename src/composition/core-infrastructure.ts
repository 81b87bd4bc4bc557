/**
 * The core's infrastructure part: the configuration, the logger, the clock, metrics and
 * tracing, the database (migrated), blob storage and the shared rate limiter; with the
 * readiness of the database and the shared dependencies, and their closing.
 */
import pino, { type Logger } from 'pino';
import { sql } from 'kysely';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config/schema.js';
import { openDatabase, type Database } from '../storage/db/database.js';
import { migrateToLatest, pendingMigrations } from '../storage/db/migrate.js';
import { createBlobStore } from '../storage/blobs/create-blob-store.js';
import type { BlobStore } from '../domain/files/blob-store.port.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { systemClock, type Clock } from '../domain/shared/clock.js';
import { Metrics } from '../observability/metrics.js';
import { probeSharedDependencies, warnIfRedisUnreachable } from '../observability/dependency-probes.js';
import type { Tracing } from '../observability/tracing.js';
import { gatheringLogDestination } from '../observability/log-destination.js';
import { TracingBlobStore } from '../observability/tracing-blob-store.js';

/** What tests (and the CLI) may supply in place of what the configuration would build. */
export interface InfrastructureOverrides {
  database?: Database;
  blobs?: BlobStore;
  clock?: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** Replace the OTLP exporter when tracing is on (tests: an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
}

export interface CoreInfrastructure {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  /** Tracing is on. */
  traced: boolean;
  database: Database;
  blobs: BlobStore;
  rateLimiter: RateLimiter;
}

/** A part of the core: its services, and how it is closed. */
export interface CorePart<Services> {
  services: Services;
  close(): Promise<void>;
}

export interface InfrastructurePart extends CorePart<CoreInfrastructure> {
  /** Named checks for /readyz: the database, its migrations, the blob store and Redis. */
  readiness(): Promise<Record<string, string>>;
}

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

/** Opens the database and applies pending migrations; starts tracing when configured. */
export async function createInfrastructure(config: Readonly<Config>, overrides: InfrastructureOverrides): Promise<InfrastructurePart> {
  const logger = overrides.logger ?? createLogger(config);
  const clock = overrides.clock ?? systemClock;
  const metrics = overrides.metrics ?? new Metrics();
  const tracing: Tracing | null = config.tracing.enabled ? (await import('../observability/tracing-sdk.js')).startTracing(config.tracing, overrides.spanProcessors) : null;
  const database = overrides.database ?? openDatabase(config.database);
  await migrateToLatest(database);
  const untracedBlobs = overrides.blobs ?? createBlobStore(config.blobs);
  const blobs = tracing ? new TracingBlobStore(untracedBlobs, config.blobs.kind) : untracedBlobs;
  const rateLimiter = createRateLimiter({ requestsPerMinute: config.rateLimit.requestsPerMinute, redisUrl: config.redisUrl, keyPrefix: config.rateLimit.redisPrefix });
  const probeTargets = { blobs, rateLimiter, redisConfigured: config.redisUrl !== null, logger };
  void warnIfRedisUnreachable(probeTargets);
  return {
    services: { config, logger, clock, metrics, traced: tracing !== null, database, blobs, rateLimiter },
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
      await rateLimiter.close();
      if (!overrides.blobs) await blobs.close?.();
      await database.close();
      await tracing?.shutdown();
    },
  };
}

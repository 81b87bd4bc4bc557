/**
 * The signed gateway's objects, built once by the composition root: the verifier and its
 * replay store (Redis when REDIS_URL is set, so replicas share it), the intermediary
 * client, the intermediary meter, the gateway project (the tenant its usage lists under)
 * and the settler that delivers usage reports from the outbox.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Clock } from '../domain/shared/clock.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { ProjectsService } from '../domain/projects/projects.service.js';
import { GatewayVerifier } from '../domain/gateway/gateway-verifier.js';
import type { ReplayGuard } from '../domain/gateway/replay-guard.js';
import type { IntermediaryClient, UsageEvent } from '../domain/gateway/intermediary.port.js';
import { IntermediaryMeter } from '../domain/gateway/intermediary-meter.js';
import { OutboxWorker, type OutboxHandler } from '../domain/outbox/outbox-worker.js';
import { OutboxAdmin } from '../domain/outbox/outbox-admin.js';
import { SettlementBatcher } from '../domain/gateway/settlement-batcher.js';
import { HttpIntermediaryClient } from '../clients/intermediary-http.js';
import { MemoryReplayGuard } from '../storage/replay/memory-replay-guard.js';
import { RedisReplayGuard } from '../storage/replay/redis-replay-guard.js';
import type { Database } from '../storage/db/database.js';
import { OutboxRepository } from '../storage/db/repositories/outbox.repository.js';
import { GATEWAY_USAGE_TARGET, GatewaySettlementsRepository } from '../storage/db/repositories/gateway-settlements.repository.js';
import type { UsageRepository } from '../storage/db/repositories/usage.repository.js';
import { catalogEntry } from '../inference/catalog.js';
import { createRateLimiter, type RateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';
import { GatewayMetrics } from '../observability/gateway-metrics.js';

export interface Gateway {
  verifier: GatewayVerifier;
  meter: IntermediaryMeter;
  metrics: GatewayMetrics;
  /** The gateway project's id: the tenant of every gateway call. */
  tenantProjectId: string;
  intermediaryId: string;
  /** Requests per minute per agent (`gateway.rate_limit_rpm`), in Redis when REDIS_URL is set. */
  rateLimiter: RateLimiter;
  outbox: OutboxRepository;
  /** Delivers usage reports; a BackgroundWorker of the container. */
  settler: OutboxWorker;
  /** The admin API's view of the usage reports (dead letters, replay). */
  settlements: OutboxAdmin;
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: Readonly<Config>;
  database: Database;
  usage: UsageRepository;
  billing: BillingService;
  projects: ProjectsService;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

/** A stable UUID per intermediary, so every replica ensures the same gateway project. */
export function gatewayProjectId(intermediaryId: string): string {
  const hex = createHash('sha256').update(`sluice-gateway:${intermediaryId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const NO_INTERMEDIARY: IntermediaryClient = {
  checkAllowance: () => Promise.resolve({ kind: 'unavailable', cause: 'no intermediary configured' }),
  reportUsage: () => Promise.resolve({ kind: 'retry', cause: 'no intermediary configured', retryAfterMs: null }),
};

function usageReportHandler(client: IntermediaryClient): OutboxHandler {
  return {
    target: GATEWAY_USAGE_TARGET,
    async deliver(messages) {
      const outcome = await client.reportUsage(messages.flatMap((m) => (m.payload as { events: UsageEvent[] }).events));
      return outcome.kind === 'delivered' ? { kind: 'delivered' } : outcome;
    },
  };
}

export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, clock } = deps;
  const settings = config.gateway;
  const logger = deps.logger.child({ component: 'gateway' });
  const metrics = new GatewayMetrics(deps.metrics);
  const replay: ReplayGuard = config.redisUrl ? new RedisReplayGuard(config.redisUrl, 'sluice:gw:replay') : new MemoryReplayGuard(clock);
  const verifier = new GatewayVerifier({ secrets: settings.signingSecrets, toleranceSeconds: settings.toleranceSeconds, replay, clock });
  const client: IntermediaryClient = settings.apiUrl
    ? new HttpIntermediaryClient({ apiUrl: settings.apiUrl, readKey: settings.readKey, writeKey: settings.writeKey, checkTimeoutMs: settings.checkTimeoutMs })
    : NO_INTERMEDIARY;

  const tenantProjectId = gatewayProjectId(settings.intermediaryId);
  await deps.projects.ensureProject(tenantProjectId, `gateway:${settings.intermediaryId}`);

  const outbox = new OutboxRepository(deps.database);
  const settlements = new GatewaySettlementsRepository(deps.database, deps.usage, outbox);
  const batcher = new SettlementBatcher(
    (batch) => settlements.writeMany(batch),
    (batch) => {
      deps.billing.committed(batch.map((s) => s.record));
      settler.wake();
    },
  );
  const settler = new OutboxWorker({
    store: outbox,
    handler: usageReportHandler(client),
    clock,
    logger,
    maxAttempts: settings.settlementMaxAttempts,
    retryBaseMs: settings.settlementRetryBaseMs,
    wakeDelayMs: 20,
    onOutcome: (outcome, count) => metrics.settlementDeliveries.inc({ outcome }, count),
  });

  const meter = new IntermediaryMeter({
    client,
    settlements: batcher,
    // The intermediary bills; the record keeps the usage at no cost to any project.
    usageRecord: (principal, call, usage) => deps.billing.usageRecord(principal, call, { ...usage, costMicros: 0 }),
    producesOutput: (model) => catalogEntry(model)?.task !== 'embeddings',
    clock,
    allowanceCacheMs: settings.allowanceCacheMs,
    onAllowance(outcome, detail) {
      metrics.allowanceChecks.inc({ outcome });
      if (outcome === 'unavailable') logger.warn({ ...detail, event: 'allowance_unavailable' }, 'allowance check failed open: the intermediary is unavailable');
      if (outcome === 'misconfigured') logger.error({ ...detail, event: 'allowance_refused' }, 'the intermediary refused the allowance check: check GATEWAY_READ_KEY and GATEWAY_API_URL');
    },
  });

  const rateLimiter = createRateLimiter({
    requestsPerMinute: settings.requestsPerMinute,
    redisUrl: config.redisUrl,
    keyPrefix: `${config.rateLimit.redisPrefix}:gw`,
  });

  return {
    verifier,
    meter,
    metrics,
    tenantProjectId,
    intermediaryId: settings.intermediaryId,
    rateLimiter,
    outbox,
    settler,
    settlements: new OutboxAdmin(outbox, GATEWAY_USAGE_TARGET, clock, () => settler.wake()),
    async close() {
      await settler.stop();
      await rateLimiter.close();
      await client.close?.();
      await replay.close?.();
    },
  };
}

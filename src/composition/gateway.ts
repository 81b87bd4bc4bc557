/**
 * The signed gateway (`/gateway/v1`): the verifier and its replay store (Redis when
 * REDIS_URL is set, so replicas share it), the intermediary client, the intermediary
 * meter, the gateway project (the tenant its usage lists under), the outbox handler that
 * delivers its usage reports, and its scope.
 */
import { createHash } from 'node:crypto';
import { GatewayVerifier } from '../domain/gateway/gateway-verifier.js';
import type { ReplayGuard } from '../domain/gateway/replay-guard.port.js';
import type { IntermediaryClient } from '../domain/gateway/intermediary.port.js';
import { callReportsOf, combinedReport, eventsOfReport, type UsageReport } from '../domain/gateway/usage-report.js';
import { IntermediaryMeter } from '../domain/gateway/intermediary-meter.js';
import { HttpIntermediaryClient } from '../adapters/intermediary/intermediary-http.js';
import { MemoryReplayGuard } from '../storage/replay/memory-replay-guard.js';
import { RedisReplayGuard } from '../storage/replay/redis-replay-guard.js';
import type { DeliveryRefusal, OutboxEntry, OutboxHandler } from '../domain/outbox/outbox.types.js';
import { catalogEntry } from '../config/catalog.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { GatewayMetrics } from '../observability/gateway-metrics.js';
import { gatewayScope } from '../http/scopes/gateway.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature } from './feature.js';

export interface Gateway {
  verifier: GatewayVerifier;
  meter: IntermediaryMeter;
  metrics: GatewayMetrics;
  /** The gateway project's id: the tenant of every gateway call. */
  tenantProjectId: string;
  intermediaryId: string;
  /** Requests per minute per agent (`gateway.rate_limit_rpm`), in Redis when REDIS_URL is set. */
  rateLimiter: RateLimiter;
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

/** The outbox target kind of usage reports owed to the intermediary. */
export const INTERMEDIARY_TARGET = 'intermediary';

/**
 * Delivers usage reports: one call's, or many calls' in one report (the intermediary
 * deduplicates per event). A 4xx other than 429 will never be accepted as sent: dead at
 * once; anything else transient is retried, no sooner than the intermediary's Retry-After.
 */
function usageReportHandler(client: IntermediaryClient): OutboxHandler {
  const report = async (entries: readonly OutboxEntry[]): Promise<void | DeliveryRefusal> => {
    const outcome = await client.reportUsage(entries.flatMap((entry) => eventsOfReport(entry.payload)));
    if (outcome.kind === 'delivered') return;
    const cause = `usage report not accepted: ${outcome.cause}`;
    return outcome.kind === 'rejected' ? { kind: 'rejected', cause } : { kind: 'retry', cause, retryAfterMs: outcome.retryAfterMs };
  };
  return {
    deliver: (entry) => report([entry]),
    deliverMany: (entries) => report(entries),
    // The calls of one transaction are one message, keyed by its first call.
    combine: (messages) => ({
      targetKind: INTERMEDIARY_TARGET,
      idempotencyKey: messages[0]!.idempotencyKey,
      payload: combinedReport(messages.map((m) => m.payload as UsageReport)),
    }),
    split: (entry) => callReportsOf(entry.payload, entry.idempotencyKey).map(({ key, report }) => ({ targetKind: INTERMEDIARY_TARGET, idempotencyKey: key, payload: report })),
  };
}

export async function createGatewayFeature(deps: CoreInfrastructure & CoreBilling & CoreInference): Promise<Feature<Gateway>> {
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
  // Only a configured gateway meters calls; an unconfigured one refuses every request, and
  // its tenant would be an empty project in every operator's listing.
  if (settings.signingSecrets.size > 0) await deps.projects.ensureProject(tenantProjectId, `gateway:${settings.intermediaryId}`);

  const meter = new IntermediaryMeter({
    client,
    settlements: {
      // One message per call, in the usage record's transaction (which may combine it with others').
      write: (record, call) => {
        const report: UsageReport = { calls: [call] };
        return deps.billing.write(record, { outbox: [{ targetKind: INTERMEDIARY_TARGET, idempotencyKey: call.key, payload: report }] });
      },
    },
    // The intermediary bills; the record keeps the usage at no cost to any project.
    usageRecord: (principal, call, usage) =>
      deps.billing.usageRecord(principal, call, { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, status: usage.status, costMicros: 0 }),
    producesOutput: (model) => catalogEntry(model)?.task !== 'embeddings',
    clock,
    allowanceCacheMs: settings.allowanceCacheMs,
    onAllowance(outcome, detail) {
      metrics.allowanceChecks.inc([outcome]);
      if (outcome === 'unavailable') logger.warn({ ...detail, event: 'allowance_unavailable' }, 'allowance check failed open: the intermediary is unavailable');
      if (outcome === 'misconfigured') logger.error({ ...detail, event: 'allowance_refused' }, 'the intermediary refused the allowance check: check GATEWAY_READ_KEY and GATEWAY_API_URL');
    },
  });

  const rateLimiter = createRateLimiter({
    requestsPerMinute: settings.requestsPerMinute,
    redisUrl: config.redisUrl,
    keyPrefix: `${config.rateLimit.redisPrefix}:gw`,
  });

  const onRejected = (reason: string) => metrics.signatureRejections.inc({ reason });
  const strategy = { verifier, meter, tenantProjectId, intermediaryId: settings.intermediaryId, onRejected };
  return {
    services: { verifier, meter, metrics, tenantProjectId, intermediaryId: settings.intermediaryId, rateLimiter },
    scopes: () => [
      gatewayScope(
        { strategy, rateLimiter, requestsPerMinute: settings.requestsPerMinute, clock, logger: deps.logger },
        deps.routes.wire.filter((route) => route.format.gateway),
      ),
    ],
    outboxHandlers: new Map([[INTERMEDIARY_TARGET, usageReportHandler(client)]]),
    async close() {
      await rateLimiter.close();
      await client.close?.();
      await replay.close?.();
    },
  };
}

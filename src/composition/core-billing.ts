/**
 * The core's billing part: who calls and who pays. API keys and projects (with the key
 * revocation feed on PostgreSQL), billing and its meters, credit held by calls in flight,
 * the payers' debits, the settlement outbox and the audit log; with the per-key rate limit of the
 * scopes that authenticate API keys.
 */
import { ProjectsRepository } from '../storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from '../storage/db/repositories/api-keys.repository.js';
import { PostgresKeyRevocationFeed } from '../storage/db/key-revocation-feed.js';
import { UsageRepository, type PayerDebit } from '../storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from '../storage/db/repositories/usage-reports.repository.js';
import { CreditGrantsRepository } from '../storage/db/repositories/credit-grants.repository.js';
import { AuditLogRepository } from '../storage/db/repositories/audit-log.repository.js';
import { AuditLog } from '../domain/audit/audit-log.js';
import { ApiKeyAuthenticator } from '../domain/identity/authenticator.js';
import type { PayerKind } from '../domain/identity/caller.js';
import { ProjectsService } from '../domain/projects/projects.service.js';
import { BillingService } from '../domain/billing/billing.service.js';
import { CreditMeter } from '../domain/billing/credit-meter.js';
import type { MeterResolver } from '../domain/billing/meter-resolver.js';
import { ReservationBook } from '../domain/billing/reservations.js';
import type { TokenPrice } from '../domain/shared/money.js';
import { traceBilling } from '../observability/trace-decorators.js';
import type { ScopeRateLimit } from '../http/scope-policy.js';
import type { CoreInfrastructure, CorePart } from './core-infrastructure.js';
import { createLineMeters, createOutbox, type Outbox } from './outbox.js';
import { createKeyBudgets } from './budgets.js';
import type { TokenRateMeter } from '../domain/billing/token-rate-meter.js';

export interface CoreBilling {
  /** Requests per minute per API key: the limit of /v1, the admin API and the console. */
  apiKeyRateLimit: ScopeRateLimit;
  repositories: { projects: ProjectsRepository; keys: ApiKeysRepository; usage: UsageRepository };
  authenticator: ApiKeyAuthenticator;
  projects: ProjectsService;
  billing: BillingService;
  /** The meter of calls paid from project credit (API keys, batch lines). */
  creditMeter: CreditMeter;
  /** The meter of calls by API keys (and their batch lines): project credit, and the key's tpm and budget when it has them. */
  keyMeter: TokenRateMeter;
  /** Credit held by calls in flight, shared by every meter that draws on a balance. */
  reservations: ReservationBook;
  /** The meter of each batch line, by its batch's payer kind (features register theirs). */
  meters: MeterResolver;
  /** The debit of each payer kind other than `project`, written with its usage records (features register theirs). */
  payerDebits: Map<PayerKind, PayerDebit>;
  /** The settlement outbox: its store, handlers by target kind (features register theirs) and deliverer. */
  outbox: Outbox;
  /** The price of a model's tokens (zero for a model without one). */
  priceOf(model: string): TokenPrice;
  /** The audit log: every change to keys, projects, credit, people, and every console sign-in. */
  audit: AuditLog;
}

export function createBilling(infra: CoreInfrastructure): CorePart<CoreBilling> {
  const { config, database, clock, logger, metrics, rateLimiter } = infra;
  const payerDebits = new Map<PayerKind, PayerDebit>();
  const repositories = { projects: new ProjectsRepository(database), keys: new ApiKeysRepository(database), usage: new UsageRepository(database, payerDebits) };
  const authenticator = new ApiKeyAuthenticator(repositories.keys, clock, config.auth.cacheTtlMs);
  const revocations = config.database.kind === 'postgres' ? new PostgresKeyRevocationFeed(config.database.url, logger) : null;
  revocations?.start({ revoked: (keyHash) => authenticator.forget(keyHash), live: (listening) => authenticator.feedListening(listening) });
  const priceOf = (model: string) => config.models[model]?.price ?? { inputPerMillionUsd: 0, outputPerMillionUsd: 0 };
  const outbox = createOutbox({ config, database, clock, logger, metrics });
  const billing = new BillingService(repositories.projects, repositories.usage, priceOf, clock, {
    observe: (record) => {
      metrics.usageTokens.inc([record.model, 'input'], record.inputTokens);
      metrics.usageTokens.inc([record.model, 'output'], record.outputTokens);
      if (record.cachedInputTokens) metrics.usageTokens.inc([record.model, 'cached_input'], record.cachedInputTokens);
      metrics.usageCostMicros.inc([record.model], record.costMicros);
    },
    // Settlement messages are written leased to this process's deliverer, which sends them from memory.
    outbox: outbox.deliverer,
  });
  if (infra.traced) traceBilling(billing);
  const projects = new ProjectsService({
    ...repositories, reports: new UsageReportsRepository(database), grants: new CreditGrantsRepository(database), authenticator, balances: billing, clock,
    freeCreditsMicros: config.billing.freeCreditsMicros,
  });
  const reservations = new ReservationBook();
  const creditMeter = new CreditMeter(billing, reservations, config.billing);
  const budgets = createKeyBudgets({ config, database, clock, billing, creditMeter });
  const apiKeyRateLimit = { limiter: rateLimiter, requestsPerMinute: config.rateLimit.requestsPerMinute };
  return {
    services: {
      apiKeyRateLimit, repositories, authenticator, projects, billing, creditMeter, keyMeter: budgets.keyMeter, reservations,
      meters: createLineMeters(budgets.keyMeter), payerDebits, outbox, priceOf, audit: new AuditLog({ store: new AuditLogRepository(database), clock }),
    },
    async close() {
      await revocations?.close();
      await budgets.close();
    },
  };
}

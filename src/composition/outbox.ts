/**
 * Composition of what follows a call's payer: the meters of batch lines, chosen by the
 * batch's payer (MeterResolver), and the settlement outbox (its store, the handlers that
 * features register by target kind, and the deliverer worker).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { MeterResolver, type LineMeter } from '../domain/billing/meter-resolver.js';
import type { OutboxHandlers } from '../domain/outbox/outbox.types.js';
import type { Clock } from '../domain/shared/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { Database } from '../storage/db/database.js';
import { OutboxRepository } from '../storage/db/repositories/outbox.repository.js';
import { OutboxDeliverer } from '../worker/outbox-deliverer.js';
import { OutboxService } from '../domain/outbox/outbox.service.js';

export interface Outbox {
  repository: OutboxRepository;
  /** Dead messages and their replay (the admin API). */
  service: OutboxService;
  /** Target kind → handler; a feature that enqueues messages registers its kind's handler here. */
  handlers: OutboxHandlers;
  deliverer: OutboxDeliverer;
}

interface OutboxDeps {
  config: Readonly<Config>;
  database: Database;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

/** The meter of each batch line, by its batch's payer kind. */
export function createLineMeters(projectMeter: { collecting(): LineMeter }): MeterResolver {
  // Project credit (and the key's budget) pays for project batches; other payer kinds are registered by the features that admit them.
  return new MeterResolver([['project', () => projectMeter.collecting()]]);
}

export function createOutbox(deps: OutboxDeps): Outbox {
  const repository = new OutboxRepository(deps.database);
  const handlers: OutboxHandlers = new Map();
  const deliverer = new OutboxDeliverer({
    store: repository,
    handlers,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'outbox' }),
    maxAttempts: deps.config.outbox.maxAttempts,
    onOutcome: (targetKind, outcome) => deps.metrics.outboxDeliveries.inc({ target_kind: targetKind, outcome }),
  });
  const service = new OutboxService(repository, deps.clock, () => deliverer.wake());
  return { repository, service, handlers, deliverer };
}

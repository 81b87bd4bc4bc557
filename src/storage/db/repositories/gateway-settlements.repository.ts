/**
 * A gateway call's usage record and the usage reports that bill it, in one transaction:
 * a crash after the answer cannot lose the report, and a report never exists for a call
 * that was not recorded.
 */
import type { Database } from '../database.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import type { UsageEvent } from '../../../domain/gateway/intermediary.port.js';
import type { SettlementWriter } from '../../../domain/gateway/intermediary-meter.js';
import { newId } from '../../../domain/shared/ids.js';
import type { OutboxRepository } from './outbox.repository.js';
import type { UsageRepository } from './usage.repository.js';

export const GATEWAY_USAGE_TARGET = 'gateway_usage';

export class GatewaySettlementsRepository implements SettlementWriter {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  async write(record: UsageRecord, events: readonly UsageEvent[]): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      await this.usage.recordAndDebitIn(trx, [record]);
      await this.outbox.insertIn(
        trx,
        events.map((event) => ({
          id: newId('obx_'),
          target: GATEWAY_USAGE_TARGET,
          idempotencyKey: event.idempotencyKey,
          payload: event,
          createdAtMs: record.createdAtMs,
        })),
      );
    });
  }
}

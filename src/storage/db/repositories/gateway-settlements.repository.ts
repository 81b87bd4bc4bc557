/**
 * Gateway calls' usage records and the usage reports that bill them, in one transaction:
 * a crash after the answer cannot lose a report, and a report never exists for a call
 * that was not recorded. Several calls share a transaction (group commit, as usage
 * records do on /v1: SettlementBatcher), synchronously on embedded SQLite when its
 * connection is idle.
 */
import type { Database } from '../database.js';
import type { SettlementBatch } from '../../../domain/gateway/settlement-batcher.js';
import { newId } from '../../../domain/shared/ids.js';
import type { NewOutboxMessage } from '../../../domain/outbox/outbox.types.js';
import type { UsageEvent } from '../../../domain/gateway/intermediary.port.js';
import type { OutboxRepository } from './outbox.repository.js';
import type { UsageRepository } from './usage.repository.js';

export const GATEWAY_USAGE_TARGET = 'gateway_usage';

/** The call's own key: its events' keys share the prefix before `:<meter>`. */
const settlementKeyOf = (requestId: string, events: readonly UsageEvent[]): string => {
  const key = events[0]?.idempotencyKey;
  return key === undefined ? requestId : key.slice(0, key.lastIndexOf(':'));
};

export class GatewaySettlementsRepository {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  async writeMany(batch: SettlementBatch): Promise<void> {
    const records = batch.map((s) => s.record);
    // One message per call, carrying one event per meter: the call is settled whole or not at all.
    const messages: NewOutboxMessage[] = batch.map(({ record, events }) => ({
      id: newId('obx_'),
      target: GATEWAY_USAGE_TARGET,
      idempotencyKey: settlementKeyOf(record.requestId, events),
      payload: { events },
      createdAtMs: record.createdAtMs,
    }));
    const sync = this.database.sync;
    if (sync?.idle) {
      const { db } = this.database;
      sync.transaction([...this.usage.writeStatements(db, records), ...this.outbox.insertStatements(db, messages)]);
      return;
    }
    await this.database.db.transaction().execute(async (trx) => {
      await this.usage.recordAndDebitIn(trx, records);
      await this.outbox.insertIn(trx, messages);
    });
  }
}

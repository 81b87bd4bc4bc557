/** The outbox's queries (src/domain/outbox), on both SQLite and PostgreSQL. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, OutboxMessagesTable, Tables } from '../database.js';
import type { NewOutboxMessage, OutboxMessage, OutboxState, OutboxStore } from '../../../domain/outbox/outbox.types.js';

const toMessage = (row: Selectable<OutboxMessagesTable>): OutboxMessage => ({
  id: row.id,
  target: row.target,
  idempotencyKey: row.idempotency_key,
  payload: JSON.parse(row.payload) as unknown,
  state: row.state as OutboxState,
  attempts: Number(row.attempts),
  nextAttemptAtMs: Number(row.next_attempt_at),
  lastError: row.last_error,
  createdAtMs: Number(row.created_at),
  sentAtMs: row.sent_at === null ? null : Number(row.sent_at),
});

export class OutboxRepository implements OutboxStore {
  constructor(private readonly database: Database) {}

  /** Enqueues inside a caller's transaction (beside the state the messages report); due at once. */
  async insertIn(trx: Kysely<Tables>, messages: readonly NewOutboxMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await trx
      .insertInto('outbox_messages')
      .values(
        messages.map((m) => ({
          id: m.id,
          target: m.target,
          idempotency_key: m.idempotencyKey,
          payload: JSON.stringify(m.payload),
          state: 'pending',
          attempts: 0,
          next_attempt_at: m.createdAtMs,
          last_error: null,
          created_at: m.createdAtMs,
          sent_at: null,
        })),
      )
      // A key enqueued before (an intermediary that reused a request id) is the same report.
      .onConflict((oc) => oc.columns(['target', 'idempotency_key']).doNothing())
      .execute();
  }

  async claimDue(target: string, nowMs: number, limit: number, leaseMs: number): Promise<OutboxMessage[]> {
    return this.database.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('outbox_messages')
        .selectAll()
        .where('target', '=', target)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', nowMs)
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
      const claimed: OutboxMessage[] = [];
      // Conditional on the row still being due as read: of two workers, one takes it.
      for (const row of rows) {
        const result = await trx
          .updateTable('outbox_messages')
          .set({ next_attempt_at: nowMs + leaseMs })
          .where('id', '=', row.id)
          .where('state', '=', 'pending')
          .where('next_attempt_at', '=', row.next_attempt_at)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1) claimed.push(toMessage(row));
      }
      return claimed;
    });
  }

  async markSent(ids: readonly string[], nowMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.database.db.updateTable('outbox_messages').set({ state: 'sent', sent_at: nowMs, last_error: null }).where('id', 'in', ids).execute();
  }

  async markRetry(id: string, attempts: number, nextAttemptAtMs: number, error: string): Promise<void> {
    await this.database.db
      .updateTable('outbox_messages')
      .set({ attempts, next_attempt_at: nextAttemptAtMs, last_error: error.slice(0, 500) })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  }

  async markDead(id: string, attempts: number, error: string): Promise<void> {
    await this.database.db
      .updateTable('outbox_messages')
      .set({ state: 'dead', attempts, last_error: error.slice(0, 500) })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  }

  async list(target: string, state: OutboxState, limit: number, after?: string): Promise<{ items: OutboxMessage[]; hasMore: boolean }> {
    let query = this.database.db.selectFrom('outbox_messages').selectAll().where('target', '=', target).where('state', '=', state);
    if (after !== undefined) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toMessage), hasMore: rows.length > limit };
  }

  async replay(target: string, id: string, nowMs: number): Promise<OutboxMessage | undefined> {
    const result = await this.database.db
      .updateTable('outbox_messages')
      .set({ state: 'pending', attempts: 0, next_attempt_at: nowMs })
      .where('id', '=', id)
      .where('target', '=', target)
      .where('state', '=', 'dead')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    const row = await this.database.db.selectFrom('outbox_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return toMessage(row);
  }
}

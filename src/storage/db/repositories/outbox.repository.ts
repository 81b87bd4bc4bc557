/** The outbox's queries (src/domain/outbox), on both SQLite and PostgreSQL. */
import type { Kysely, Selectable } from 'kysely';
import { CompiledQueries, kyselyQuery, type Database, type OutboxMessagesTable, type SqlStatement, type Tables } from '../database.js';
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

/** Row counts up to this get a statement compiled once each (a group commit holds a few calls' rows). */
const MAX_COMPILED_ROWS = 64;

export class OutboxRepository implements OutboxStore {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  /** Enqueues inside a caller's transaction (beside the state the messages report); due at once. */
  async insertIn(trx: Kysely<Tables>, messages: readonly NewOutboxMessage[]): Promise<void> {
    for (const statement of this.insertStatements(trx, messages)) await trx.executeQuery(kyselyQuery(statement));
  }

  /** The insert of `messages`, for a transaction the caller runs (synchronously on SQLite, or through Kysely). */
  insertStatements(executor: Kysely<Tables>, messages: readonly NewOutboxMessage[]): SqlStatement[] {
    if (messages.length === 0) return [];
    const rows = messages.map((m) => ({
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
    }));
    const build = () =>
      executor
        .insertInto('outbox_messages')
        .values(rows)
        // A key enqueued before (an intermediary that reused a request id) is the same report.
        .onConflict((oc) => oc.columns(['target', 'idempotency_key']).doNothing());
    if (rows.length > MAX_COMPILED_ROWS) return [build().compile()];
    const parameters = rows.flatMap((r) => [r.id, r.target, r.idempotency_key, r.payload, r.state, r.attempts, r.next_attempt_at, r.last_error, r.created_at, r.sent_at]);
    return [this.#compiled.statement(`insert:${rows.length}`, build, parameters)];
  }

  /**
   * One statement, no transaction held open: pushes the due rows' next attempt past the
   * lease and returns them. The outer conditions are checked again on each row as it is
   * updated, so of two workers racing for a row only one gets it.
   */
  async claimDue(target: string, nowMs: number, limit: number, leaseMs: number): Promise<OutboxMessage[]> {
    const { db } = this.database;
    const due = db
      .selectFrom('outbox_messages')
      .select('id')
      .where('target', '=', target)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowMs)
      .orderBy('next_attempt_at')
      .limit(limit);
    const rows = await db
      .updateTable('outbox_messages')
      .set({ next_attempt_at: nowMs + leaseMs })
      .where('id', 'in', due)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowMs)
      .returningAll()
      .execute();
    return rows.map(toMessage).sort((a, b) => (a.id < b.id ? -1 : 1));
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

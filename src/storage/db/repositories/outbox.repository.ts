/**
 * The settlement outbox's rows. Entries are inserted by the usage transaction
 * (outboxInsert, called by UsageRepository inside it); delivery state changes are
 * conditional UPDATEs, so deliverers on several processes and replicas share one table:
 * an entry is claimed with one UPDATE ... WHERE pending AND due AND unleased RETURNING,
 * which both SQLite and PostgreSQL run atomically (PostgreSQL re-checks the WHERE on the
 * row it locked), and every later change is guarded by the claiming owner.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { kyselyQuery, type CompiledQueries, type Database, type OutboxTable, type SqlStatement, type Tables } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { OutboxEntry, OutboxFilter, OutboxState, OutboxStore } from '../../../domain/outbox/outbox.types.js';

const ms = (value: number | null): number | null => (value === null ? null : Number(value));

const toEntry = (row: Selectable<OutboxTable>): OutboxEntry => ({
  id: row.id,
  targetKind: row.target_kind,
  idempotencyKey: row.idempotency_key,
  payload: JSON.parse(row.payload) as unknown,
  state: row.state as OutboxState,
  attempts: Number(row.attempts),
  nextAttemptAtMs: Number(row.next_attempt_at),
  lastError: row.last_error,
  createdAtMs: Number(row.created_at),
  deliveredAtMs: ms(row.delivered_at),
});

const toRow = (entry: OutboxEntry): OutboxTable => ({
  id: entry.id,
  target_kind: entry.targetKind,
  idempotency_key: entry.idempotencyKey,
  payload: JSON.stringify(entry.payload ?? null),
  state: entry.state,
  attempts: entry.attempts,
  next_attempt_at: entry.nextAttemptAtMs,
  lease_owner: entry.lease?.owner ?? null,
  lease_expires_at: entry.lease?.expiresAtMs ?? null,
  last_error: entry.lastError,
  created_at: entry.createdAtMs,
  delivered_at: entry.deliveredAtMs,
});

/** The columns' values of `entries` in toRow's order (the compiled insert's parameters). */
function rowParameters(entries: readonly OutboxEntry[]): unknown[] {
  const out: unknown[] = [];
  for (const entry of entries) out.push(...Object.values(toRow(entry)));
  return out;
}

const MAX_COMPILED_ROWS = 32;

/**
 * The insert of `entries`, for a transaction that another repository runs (the usage
 * transaction). With `compiled` (the caller's cache, one per database: the SQL text is
 * the dialect's), compiled once per row count, as the usage insert is: it runs with every
 * settled gateway call, and building it through Kysely each time cost more than the insert.
 */
export function outboxInsert(executor: Kysely<Tables>, entries: readonly OutboxEntry[], compiled?: CompiledQueries): SqlStatement | null {
  if (entries.length === 0) return null;
  const insert = () => executor.insertInto('outbox').values(entries.map(toRow));
  if (!compiled || entries.length > MAX_COMPILED_ROWS) return insert().compile();
  return compiled.statement(`outbox-insert:${entries.length}`, insert, rowParameters(entries));
}

/** Candidates read per claim; the UPDATE decides which of them this owner gets. */
const CANDIDATE_FACTOR = 2;

export class OutboxRepository implements OutboxStore {
  constructor(private readonly database: Database) {}

  async claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<OutboxEntry[]> {
    const candidates = await this.database.db
      .selectFrom('outbox')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowMs)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
      .orderBy('next_attempt_at')
      .limit(limit * CANDIDATE_FACTOR)
      .execute();
    if (candidates.length === 0) return [];
    const rows = await this.database.db
      .updateTable('outbox')
      .set({ lease_owner: owner, lease_expires_at: nowMs + leaseMs, attempts: sql`attempts + 1` })
      .where('id', 'in', candidates.slice(0, limit).map((c) => c.id))
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowMs)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
      .returningAll()
      .execute();
    return rows.map(toEntry);
  }

  async markDelivered(id: string, owner: string, nowMs: number): Promise<boolean> {
    return this.#release(id, owner, { state: 'delivered', delivered_at: nowMs, last_error: null });
  }

  async markDeliveredMany(ids: readonly string[], owner: string, nowMs: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.database.db
      .updateTable('outbox')
      .set({ state: 'delivered', delivered_at: nowMs, last_error: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  }

  async reschedule(id: string, owner: string, nextAttemptAtMs: number, error: string): Promise<boolean> {
    return this.#release(id, owner, { next_attempt_at: nextAttemptAtMs, last_error: error });
  }

  async markDead(id: string, owner: string, error: string): Promise<boolean> {
    return this.#release(id, owner, { state: 'dead', last_error: error });
  }

  /** Applies `patch` and drops the lease, if `owner` still holds the pending entry. */
  async #release(id: string, owner: string, patch: Partial<OutboxTable>): Promise<boolean> {
    const result = await this.database.db
      .updateTable('outbox')
      .set({ ...patch, lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async split(id: string, owner: string, parts: readonly OutboxEntry[]): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const removed = await trx.deleteFrom('outbox').where('id', '=', id).where('lease_owner', '=', owner).where('state', '=', 'pending').executeTakeFirst();
      if (Number(removed.numDeletedRows) === 0) return false;
      const insert = outboxInsert(trx, parts);
      if (insert) await trx.executeQuery(kyselyQuery(insert));
      return true;
    });
  }

  async find(id: string): Promise<OutboxEntry | undefined> {
    const row = await this.database.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toEntry(row) : undefined;
  }

  async list(filter: OutboxFilter, limit: number, after?: string): Promise<Page<OutboxEntry>> {
    let query = this.database.db.selectFrom('outbox').selectAll();
    if (filter.state) query = query.where('state', '=', filter.state);
    if (filter.targetKind) query = query.where('target_kind', '=', filter.targetKind);
    if (after) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toEntry), hasMore: rows.length > limit };
  }

  async listDead(limit: number, after?: string): Promise<Page<OutboxEntry>> {
    let query = this.database.db.selectFrom('outbox').selectAll().where('state', '=', 'dead');
    if (after) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toEntry), hasMore: rows.length > limit };
  }

  async purgeDelivered(deliveredBeforeMs: number): Promise<number> {
    const result = await this.database.db
      .deleteFrom('outbox')
      .where('state', '=', 'delivered')
      .where('delivered_at', '<', deliveredBeforeMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async replay(id: string, nowMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('outbox')
      .set({ state: 'pending', attempts: 0, next_attempt_at: nowMs, last_error: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('state', '=', 'dead')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}

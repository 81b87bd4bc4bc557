import { sql, type Kysely } from 'kysely';
import { CompiledQueries, kyselyQuery, type Database, type SqlStatement, type Tables, type UsageRecordsTable } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import type { UsageStore } from '../../../domain/billing/usage-writer.js';
import type { UsageHistory } from '../../../domain/projects/project.types.js';


const toRecord = (row: UsageRecordsTable): UsageRecord => ({
  id: row.id,
  projectId: row.project_id,
  keyId: row.key_id,
  model: row.model,
  route: row.route,
  inputTokens: Number(row.input_tokens),
  outputTokens: Number(row.output_tokens),
  costMicros: Number(row.cost_micros),
  requestId: row.request_id,
  status: Number(row.status),
  createdAtMs: Number(row.created_at),
});

const toRow = (record: UsageRecord): UsageRecordsTable => ({
  id: record.id,
  project_id: record.projectId,
  key_id: record.keyId,
  model: record.model,
  route: record.route,
  input_tokens: record.inputTokens,
  output_tokens: record.outputTokens,
  cost_micros: record.costMicros,
  request_id: record.requestId,
  status: record.status,
  created_at: record.createdAtMs,
});

/** The records' values in toRow()'s column order, row after row (CompiledQueries checks the order). */
function rowParameters(records: readonly UsageRecord[]): unknown[] {
  const out: unknown[] = [];
  for (const r of records) {
    out.push(r.id, r.projectId, r.keyId, r.model, r.route, r.inputTokens, r.outputTokens, r.costMicros, r.requestId, r.status, r.createdAtMs);
  }
  return out;
}

const MAX_COMPILED_ROWS = 32;

export class UsageRepository implements UsageStore, UsageHistory {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  /**
   * Writes the usage record and debits the project in one transaction, so a record
   * never exists without its debit or the reverse.
   */
  async recordAndDebit(record: UsageRecord): Promise<void> {
    await this.recordAndDebitMany([record]);
  }

  /** Several records and their debits in one transaction (group commit of concurrent calls). */
  async recordAndDebitMany(records: readonly UsageRecord[]): Promise<void> {
    const sync = this.database.sync;
    if (sync?.idle) {
      sync.transaction(this.writeStatements(this.database.db, records));
      return;
    }
    await this.database.db.transaction().execute((trx) => this.recordAndDebitIn(trx, records));
  }

  /**
   * The same writes for several records inside a caller's transaction (batch lines write
   * their usage with their results): one insert, and one debit per project.
   */
  async recordAndDebitIn(trx: Kysely<Tables>, records: readonly UsageRecord[]): Promise<void> {
    for (const statement of this.writeStatements(trx, records)) await trx.executeQuery(kyselyQuery(statement));
  }

  /** The statements that write `records` and their debits (for a transaction that also writes other rows). */
  writeStatements(executor: Kysely<Tables>, records: readonly UsageRecord[]): SqlStatement[] {
    if (records.length === 0) return [];
    const insert = () => executor.insertInto('usage_records').values(records.map(toRow));
    // Row counts up to a small bound get a compiled statement each (calls in one turn are few).
    const statements: SqlStatement[] = [
      records.length <= MAX_COMPILED_ROWS ? this.#compiled.statement(`insert:${records.length}`, insert, rowParameters(records)) : insert().compile(),
    ];
    const debits = new Map<string, number>();
    for (const record of records) debits.set(record.projectId, (debits.get(record.projectId) ?? 0) + record.costMicros);
    for (const [projectId, cost] of debits) if (cost !== 0) statements.push(this.#debit(executor, projectId, cost));
    return statements;
  }

  #debit(executor: Kysely<Tables>, projectId: string, cost: number): SqlStatement {
    const build = () =>
      executor
        .updateTable('projects')
        .set({ balance_micros: sql`balance_micros - ${cost}` })
        .where('id', '=', projectId);
    return this.#compiled.statement('debit', build, [cost, projectId]);
  }

  /** Newest first; `after` is the id of the last record of the previous page. */
  async listByProject(projectId: string, limit: number, after?: string): Promise<Page<UsageRecord>> {
    let query = this.database.db.selectFrom('usage_records').selectAll().where('project_id', '=', projectId);
    if (after) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toRecord), hasMore: rows.length > limit };
  }
}

/**
 * Usage records and the debits that go with them. A record is written with its payer; a
 * `project` payer's cost is debited from that project's balance in the same transaction,
 * another kind's only through the PayerDebit registered for it (the storefront registers
 * `agent` and `receipt`, drawing on its ledger; an intermediary settles through the
 * outbox), so a call not paid by the project never touches the project's credit.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { CompiledQueries, kyselyQuery, type Database, type SqlStatement, type Tables, type UsageRecordsTable, type UsageTagsTable } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { PayerKind } from '../../../domain/identity/payer.types.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import type { BalancesAfter, UsageStore } from '../../../domain/billing/usage-store.port.js';
import type { UsageHistory } from '../../../domain/projects/project.types.js';
import type { OutboxEntry } from '../../../domain/outbox/outbox.types.js';
import { outboxInsert } from './outbox.repository.js';
import { payerOfRow } from './payer-columns.js';

/**
 * The debit of a payer kind other than `project` (a storefront agent's prepaid credit,
 * say), run in the usage transaction: the statements that debit the records of that
 * kind in it (records with a zero cost included, for a debit that keeps a movement per call).
 */
export interface PayerDebit {
  statements(executor: Kysely<Tables>, records: readonly UsageRecord[]): SqlStatement[];
}

const toRecord = (row: Selectable<UsageRecordsTable>): UsageRecord => {
  const record: UsageRecord = {
    id: row.id,
    projectId: row.project_id,
    keyId: row.key_id,
    payer: payerOfRow(row),
    model: row.model,
    route: row.route,
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costMicros: Number(row.cost_micros),
    requestId: row.request_id,
    status: Number(row.status),
    createdAtMs: Number(row.created_at),
  };
  // Only upstream calls have one (the record's field is optional).
  if (row.deployment !== null) record.deployment = row.deployment;
  if (row.session_id !== null) record.sessionId = row.session_id;
  // Absent (not null) when read at a schema from before migration 0018.
  if (row.tags) record.tags = row.tags.split(',');
  if (row.end_user) record.endUser = row.end_user;
  const cached = Number(row.cached_input_tokens);
  const written = Number(row.cache_write_tokens);
  if (cached > 0) record.cachedInputTokens = cached;
  if (written > 0) record.cacheWriteTokens = written;
  return record;
};

const toRow = (record: UsageRecord): Insertable<UsageRecordsTable> => ({
  id: record.id,
  project_id: record.projectId,
  key_id: record.keyId,
  payer_kind: record.payer.kind,
  payer_id: record.payer.id,
  model: record.model,
  route: record.route,
  input_tokens: record.inputTokens,
  output_tokens: record.outputTokens,
  cost_micros: record.costMicros,
  request_id: record.requestId,
  status: record.status,
  created_at: record.createdAtMs,
  deployment: record.deployment ?? null,
  session_id: record.sessionId ?? null,
  cached_input_tokens: record.cachedInputTokens ?? 0,
  cache_write_tokens: record.cacheWriteTokens ?? 0,
  tags: tagsColumn(record),
  end_user: record.endUser ?? null,
});

const tagsColumn = (record: UsageRecord): string | null => (record.tags && record.tags.length > 0 ? record.tags.join(',') : null);

/** A row of `usage_tags` per record and tag: the spend report by tag reads these. */
function tagRows(records: readonly UsageRecord[]): Array<Insertable<UsageTagsTable>> {
  const rows: Array<Insertable<UsageTagsTable>> = [];
  for (const r of records) {
    for (const tag of r.tags ?? []) {
      rows.push({
        project_id: r.projectId,
        created_at: r.createdAtMs,
        tag,
        usage_id: r.id,
        input_tokens: r.inputTokens,
        output_tokens: r.outputTokens,
        cached_input_tokens: r.cachedInputTokens ?? 0,
        cache_write_tokens: r.cacheWriteTokens ?? 0,
        cost_micros: r.costMicros,
      });
    }
  }
  return rows;
}

/** The records' values in toRow()'s column order, row after row (CompiledQueries checks the order). */
function rowParameters(records: readonly UsageRecord[]): unknown[] {
  const out: unknown[] = [];
  for (const r of records) {
    out.push(r.id, r.projectId, r.keyId, r.payer.kind, r.payer.id, r.model, r.route, r.inputTokens, r.outputTokens, r.costMicros, r.requestId, r.status, r.createdAtMs, r.deployment ?? null, r.sessionId ?? null, r.cachedInputTokens ?? 0, r.cacheWriteTokens ?? 0, tagsColumn(r), r.endUser ?? null);
  }
  return out;
}

const MAX_COMPILED_ROWS = 32;

interface BalanceRow {
  id: string;
  balance_micros: number;
}

const DEBIT = /^update "projects" /;
const PLACEHOLDER = /\$(\d+)/g;

/**
 * PostgreSQL statements (their placeholders renumbered) as the data-modifying CTEs of one
 * statement, which selects what the project debits return. Only for statements that
 * touch different rows (one insert per table, one debit per project): in one statement
 * none sees another's writes.
 */
function oneStatement(statements: readonly SqlStatement[], combinedTexts: Map<string, string>): SqlStatement {
  const parameters: unknown[] = [];
  for (const statement of statements) for (const value of statement.parameters) parameters.push(value);
  const key = statements.map((s) => s.sql).join('\u0000');
  let sqlText = combinedTexts.get(key);
  if (sqlText === undefined) {
    sqlText = combinedText(statements);
    if (combinedTexts.size < MAX_COMBINED_TEXTS) combinedTexts.set(key, sqlText);
  }
  return { sql: sqlText, parameters };
}

/** Bounds UsageRepository's cache of combined texts (a busy server sees a few dozen shapes). */
const MAX_COMBINED_TEXTS = 512;

function combinedText(statements: readonly SqlStatement[]): string {
  const parts: string[] = [];
  const debits: string[] = [];
  let offset = 0;
  statements.forEach((statement, i) => {
    const shift = offset;
    parts.push(`s${i} as (${statement.sql.replace(PLACEHOLDER, (_, n: string) => `$${Number(n) + shift}`)})`);
    offset += statement.parameters.length;
    if (DEBIT.test(statement.sql)) debits.push(`select "id", "balance_micros" from s${i}`);
  });
  const select = debits.length > 0 ? debits.join(' union all ') : 'select null as "id", null as "balance_micros" where false';
  return `with ${parts.join(', ')} ${select}`;
}

/** The text of #projectDebits() for `count` projects ($1, $2: the first project's id and cost). */
function projectDebitsText(count: number): string {
  const rows = Array.from({ length: count }, (_, i) => `($${2 * i + 1}::varchar, $${2 * i + 2}::bigint)`).join(', ');
  return (
    `update "projects" set "balance_micros" = "projects"."balance_micros" - "v"."cost" from (values ${rows}) as "v"("id", "cost") ` +
    `where "projects"."id" = "v"."id" returning "projects"."id", "projects"."balance_micros"`
  );
}

export class UsageRepository implements UsageStore, UsageHistory {
  readonly #compiled = new CompiledQueries();
  /**
   * oneStatement()'s text by the texts it combines: the same few shapes recur (records per
   * commit, projects paying, outbox or not), and renumbering each one's placeholders again
   * cost more than the rest of the commit's work in this process; one text object per shape
   * also lets the connection find its prepared statement (prepared-statements.ts) at once.
   */
  readonly #combinedTexts = new Map<string, string>();
  /** #projectDebits()'s text by the number of projects it debits. */
  readonly #debitTexts = new Map<number, string>();

  /** `otherDebits`: the debit of each payer kind besides `project` that has a balance here. */
  constructor(
    private readonly database: Database,
    private readonly otherDebits: ReadonlyMap<PayerKind, PayerDebit> = new Map(),
  ) {}

  /**
   * Writes the usage record, its payer's debit and its outbox entries in one
   * transaction, so a record never exists without its debit or the reverse, nor a
   * settlement message without its record.
   */
  recordAndDebit(record: UsageRecord, outbox: readonly OutboxEntry[] = []): Promise<BalancesAfter> {
    return this.recordAndDebitMany([record], outbox);
  }

  /**
   * Several records, their debits and outbox entries in one transaction (group commit of
   * concurrent calls). On PostgreSQL, when only projects pay (no other kind's debit, whose
   * statements read what the one before wrote), the writes are one statement of
   * data-modifying CTEs: atomic on its own, one round trip instead of four (begin, insert,
   * debit, commit), the group's records in one multi-row insert and its projects' debits in
   * one UPDATE … FROM (VALUES …), returning the balances the debits left, which it resolves with.
   * Both run on the database's usage connections (synchronous commit or not, by config).
   */
  async recordAndDebitMany(records: readonly UsageRecord[], outbox: readonly OutboxEntry[] = []): Promise<BalancesAfter> {
    const sync = this.database.sync;
    if (sync?.idle) {
      sync.transaction(this.#statements(this.database.db, records, outbox));
      return undefined;
    }
    const usageDb = this.database.usageDb;
    if (this.database.flavor === 'postgres' && records.every((r) => r.payer.kind === 'project')) {
      const { rows } = await usageDb.executeQuery(kyselyQuery<BalanceRow>(oneStatement(this.#statements(usageDb, records, outbox), this.#combinedTexts)));
      return new Map(rows.map((row) => [row.id, Number(row.balance_micros)]));
    }
    await usageDb.transaction().execute((trx) => this.recordAndDebitIn(trx, records, outbox));
    return undefined;
  }

  /**
   * The same writes for several records inside a caller's transaction (batch lines write
   * their usage with their results): one insert, and one debit per paying project.
   */
  async recordAndDebitIn(trx: Kysely<Tables>, records: readonly UsageRecord[], outbox: readonly OutboxEntry[] = []): Promise<void> {
    for (const statement of this.#statements(trx, records, outbox)) await trx.executeQuery(kyselyQuery(statement));
  }

  #statements(executor: Kysely<Tables>, records: readonly UsageRecord[], outbox: readonly OutboxEntry[]): SqlStatement[] {
    const statements: SqlStatement[] = [];
    if (records.length > 0) {
      const insert = () => executor.insertInto('usage_records').values(records.map(toRow));
      // Row counts up to a small bound get a compiled statement each (calls in one turn are few).
      statements.push(
        records.length <= MAX_COMPILED_ROWS ? this.#compiled.statement(`insert:${records.length}`, insert, rowParameters(records)) : insert().compile(),
      );
      const tags = tagRows(records);
      if (tags.length > 0) statements.push(executor.insertInto('usage_tags').values(tags).compile());
      statements.push(...this.#debits(executor, records));
    }
    const entries = outboxInsert(executor, outbox, this.#compiled);
    if (entries) statements.push(entries);
    return statements;
  }

  /** One debit per paying project with a non-zero cost, and the registered kinds' debits of their records. */
  #debits(executor: Kysely<Tables>, records: readonly UsageRecord[]): SqlStatement[] {
    const projectCosts = new Map<string, number>();
    const others = new Map<PayerKind, UsageRecord[]>();
    for (const record of records) {
      const { payer, costMicros } = record;
      if (payer.kind === 'project') projectCosts.set(payer.id, (projectCosts.get(payer.id) ?? 0) + costMicros);
      else if (this.otherDebits.has(payer.kind)) {
        let ofKind = others.get(payer.kind);
        if (!ofKind) others.set(payer.kind, (ofKind = []));
        ofKind.push(record);
      }
    }
    const statements: SqlStatement[] = [];
    for (const [projectId, cost] of projectCosts) if (cost === 0) projectCosts.delete(projectId);
    if (this.database.flavor === 'postgres' && projectCosts.size > 1) statements.push(this.#projectDebits(projectCosts));
    else for (const [projectId, cost] of projectCosts) statements.push(this.#debit(executor, projectId, cost));
    for (const [kind, ofKind] of others) statements.push(...this.otherDebits.get(kind)!.statements(executor, ofKind));
    return statements;
  }

  /** On PostgreSQL the debit returns the balance it left (oneStatement() selects it). */
  #debit(executor: Kysely<Tables>, projectId: string, cost: number): SqlStatement {
    const debit = () =>
      executor
        .updateTable('projects')
        .set({ balance_micros: sql`balance_micros - ${cost}` })
        .where('id', '=', projectId);
    if (this.database.flavor !== 'postgres') return this.#compiled.statement('debit', debit, [cost, projectId]);
    return this.#compiled.statement('debit-returning', () => debit().returning(['id', 'balance_micros']), [cost, projectId]);
  }

  /** PostgreSQL: every paying project's debit in one UPDATE … FROM (VALUES …), returning the balances it left. */
  #projectDebits(projectCosts: ReadonlyMap<string, number>): SqlStatement {
    const parameters: unknown[] = [];
    for (const [projectId, cost] of projectCosts) parameters.push(projectId, cost);
    let text = this.#debitTexts.get(projectCosts.size);
    if (text === undefined) {
      text = projectDebitsText(projectCosts.size);
      if (this.#debitTexts.size < MAX_COMBINED_TEXTS) this.#debitTexts.set(projectCosts.size, text);
    }
    return { sql: text, parameters };
  }

  /** Newest first; `after` is the id of the last record of the previous page. */
  async listByProject(projectId: string, limit: number, after?: string): Promise<Page<UsageRecord>> {
    let query = this.database.db.selectFrom('usage_records').selectAll().where('project_id', '=', projectId);
    if (after) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toRecord), hasMore: rows.length > limit };
  }
}

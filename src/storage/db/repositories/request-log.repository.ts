/**
 * The request log's rows: written a batch at a time by the log writer (on PostgreSQL one
 * statement with one JSON parameter, see insertAsJson; on embedded SQLite one prepared
 * insert run per row in one transaction), read newest
 * first by (created_at, id) with the filters the routes take, and swept by retention.
 */
import { sql, type ExpressionBuilder, type Insertable, type Selectable } from 'kysely';
import { CompiledQueries, type Database, type RequestLogBodiesTable, type RequestLogTable, type SqlStatement, type Tables } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { RequestLogStore, StoredBody } from '../../../domain/request-log/request-log.port.js';
import type { AttemptEntry, BodyMode, CallScope, LoggingSettings, RequestLogEntry, RequestLogFilter, RequestSession } from '../../../domain/request-log/request-log.types.js';

type Row = Selectable<RequestLogTable>;

const num = (value: number | string | bigint): number => Number(value);
const numOrNull = (value: number | string | bigint | null): number | null => (value === null ? null : Number(value));

function toEntry(row: Row): RequestLogEntry {
  return {
    id: row.id,
    projectId: row.project_id,
    keyId: row.key_id,
    createdAtMs: num(row.created_at),
    route: row.route,
    wire: row.wire,
    scope: row.scope as CallScope,
    modelRequested: row.model_requested,
    model: row.model,
    provider: row.provider,
    deployment: row.deployment,
    status: row.status,
    errorCode: row.error_code,
    stream: row.stream === 1,
    sessionId: row.session_id,
    endUser: row.end_user,
    tags: JSON.parse(row.tags) as string[],
    batchId: row.batch_id,
    inputTokens: num(row.input_tokens),
    outputTokens: num(row.output_tokens),
    cachedInputTokens: num(row.cached_input_tokens),
    costMicros: num(row.cost_micros),
    creditWaitMs: row.credit_wait_ms,
    firstByteMs: row.first_byte_ms,
    engineMs: row.engine_ms,
    totalMs: row.total_ms,
    attempts: JSON.parse(row.attempts) as AttemptEntry[],
    fallback: row.fallback === 1,
    toolsCalled: JSON.parse(row.tools_called) as string[],
    holdMicros: numOrNull(row.hold_micros),
    settledMicros: numOrNull(row.settled_micros),
    bodyLogged: row.body_logged === 1,
  };
}

function toRow(e: RequestLogEntry): Insertable<RequestLogTable> {
  return {
    id: e.id,
    project_id: e.projectId,
    key_id: e.keyId,
    created_at: e.createdAtMs,
    route: e.route,
    wire: e.wire,
    scope: e.scope,
    model_requested: e.modelRequested,
    model: e.model,
    provider: e.provider,
    deployment: e.deployment,
    status: e.status,
    error_code: e.errorCode,
    stream: e.stream ? 1 : 0,
    session_id: e.sessionId,
    end_user: e.endUser,
    tags: JSON.stringify(e.tags),
    batch_id: e.batchId,
    input_tokens: e.inputTokens,
    output_tokens: e.outputTokens,
    cached_input_tokens: e.cachedInputTokens,
    cost_micros: e.costMicros,
    credit_wait_ms: e.creditWaitMs,
    first_byte_ms: e.firstByteMs,
    engine_ms: e.engineMs,
    total_ms: e.totalMs,
    attempts: JSON.stringify(e.attempts),
    fallback: e.fallback ? 1 : 0,
    tools_called: JSON.stringify(e.toolsCalled),
    hold_micros: e.holdMicros,
    settled_micros: e.settledMicros,
    body_logged: e.bodyLogged ? 1 : 0,
  };
}

function bodyRow(entry: RequestLogEntry, body: StoredBody): Insertable<RequestLogBodiesTable> {
  return {
    id: entry.id,
    project_id: entry.projectId,
    mode: body.mode,
    request: body.request,
    response: body.response,
    truncated: body.truncated ? 1 : 0,
    blob_key: body.blobKey,
  };
}

/**
 * A batch of rows as one statement with one parameter on PostgreSQL: the rows as a JSON
 * array, expanded by `json_populate_recordset` into the table's own row type. A multi-row
 * insert of 200 entries would bind 6,400 parameters, each built into Kysely's query tree,
 * compiled and sent one by one on the server's event loop; JSON.stringify does it natively.
 * Keys are the columns' names (a missing one is null); an id already written is skipped.
 */
async function insertAsJson(database: Database, table: 'request_log' | 'request_log_bodies', rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  const json = storableJson(JSON.stringify(rows));
  await sql`insert into ${sql.table(table)} select * from json_populate_recordset(null::${sql.table(table)}, ${json}) on conflict (id) do nothing`.execute(database.db);
}

/** A JSON escape of NUL (`\u0000`), not itself escaped (an even run of backslashes before it). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * PostgreSQL text cannot hold NUL, and one NUL in a caller's text (an end user, a session
 * id) would fail the whole batch, other projects' entries with it: in the log, a NUL
 * becomes U+FFFD, the replacement character.
 */
function storableJson(json: string): string {
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '$1\\ufffd') : json;
}

/** A LIKE pattern matching `tag` as one element of the tags' JSON array (`_` and `%` taken literally). */
const tagPattern = (tag: string): string => `%${JSON.stringify(tag).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

type Where = ExpressionBuilder<Tables, 'request_log'>;

function matching(eb: Where, filter: RequestLogFilter) {
  const conditions = [];
  if (filter.projectId !== null) conditions.push(eb('project_id', '=', filter.projectId));
  if (filter.keyId !== undefined) conditions.push(eb('key_id', '=', filter.keyId));
  if (filter.model !== undefined) conditions.push(eb.or([eb('model', '=', filter.model), eb('model_requested', '=', filter.model)]));
  if (filter.status === 'error') conditions.push(eb('status', '>=', 400));
  else if (filter.status !== undefined) conditions.push(eb('status', '=', filter.status));
  if (filter.sessionId !== undefined) conditions.push(eb('session_id', '=', filter.sessionId));
  if (filter.sinceMs !== undefined) conditions.push(eb('created_at', '>=', filter.sinceMs));
  if (filter.untilMs !== undefined) conditions.push(eb('created_at', '<', filter.untilMs));
  if (filter.minCostMicros !== undefined) conditions.push(eb('cost_micros', '>=', filter.minCostMicros));
  if (filter.tag !== undefined) conditions.push(sql<boolean>`tags like ${tagPattern(filter.tag)} escape '\\'`);
  return eb.and(conditions);
}

export class RequestLogRepository implements RequestLogStore {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  async writeMany(writes: readonly { entry: RequestLogEntry; body: StoredBody | null }[]): Promise<void> {
    if (writes.length === 0) return;
    const rows = writes.map((w) => toRow(w.entry));
    const bodies = writes.filter((w) => w.body !== null).map(({ entry, body }) => bodyRow(entry, body!));
    if (this.database.flavor === 'postgres') {
      await insertAsJson(this.database, 'request_log', rows);
      await insertAsJson(this.database, 'request_log_bodies', bodies);
      return;
    }
    const sync = this.database.sync;
    if (sync?.idle) {
      sync.transaction([...rows.map((row) => this.#oneRow('request_log', row)), ...bodies.map((row) => this.#oneRow('request_log_bodies', row))]);
      return;
    }
    const { db } = this.database;
    await db.insertInto('request_log').values(rows).onConflict((oc) => oc.column('id').doNothing()).execute();
    if (bodies.length === 0) return;
    await db.insertInto('request_log_bodies').values(bodies).onConflict((oc) => oc.column('id').doNothing()).execute();
  }

  /**
   * Embedded SQLite: one row's insert, compiled once and prepared once (the statement cache),
   * run for each row of the batch in one transaction. A multi-row insert would be compiled
   * and prepared anew for every batch, on the server's event loop, for more than the rows cost.
   */
  #oneRow(table: 'request_log' | 'request_log_bodies', row: object): SqlStatement {
    const values = Object.values(row);
    const insert = () => this.database.db.insertInto(table).values(row as never).onConflict((oc) => oc.column('id').doNothing());
    return this.#compiled.statement(`insert:${table}`, insert, values);
  }

  async list(filter: RequestLogFilter, limit: number, after: string | null): Promise<Page<RequestLogEntry> | null> {
    const { db } = this.database;
    let cursor: { id: string; createdAt: number } | null = null;
    if (after !== null) {
      let found = db.selectFrom('request_log').select(['id', 'created_at']).where('id', '=', after);
      if (filter.projectId !== null) found = found.where('project_id', '=', filter.projectId);
      const row = await found.executeTakeFirst();
      if (!row) return null;
      cursor = { id: row.id, createdAt: num(row.created_at) };
    }
    let query = db.selectFrom('request_log').selectAll().where((eb) => matching(eb, filter));
    if (cursor !== null) {
      const { id, createdAt } = cursor;
      query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toEntry), hasMore: rows.length > limit };
  }

  async get(id: string, projectId: string | null): Promise<RequestLogEntry | null> {
    let query = this.database.db.selectFrom('request_log').selectAll().where('id', '=', id);
    if (projectId !== null) query = query.where('project_id', '=', projectId);
    const row = await query.executeTakeFirst();
    return row ? toEntry(row) : null;
  }

  async body(id: string, projectId: string | null): Promise<StoredBody | null> {
    let query = this.database.db.selectFrom('request_log_bodies').selectAll().where('id', '=', id);
    if (projectId !== null) query = query.where('project_id', '=', projectId);
    const row = await query.executeTakeFirst();
    if (!row) return null;
    return { mode: row.mode as Exclude<BodyMode, 'off'>, request: row.request, response: row.response, truncated: row.truncated === 1, blobKey: row.blob_key };
  }

  async session(sessionId: string, projectId: string | null, limit: number): Promise<RequestSession | null> {
    const { db } = this.database;
    const filter: RequestLogFilter = { projectId, sessionId };
    const sums = await db
      .selectFrom('request_log')
      .where((eb) => matching(eb, filter))
      .select((eb) => [
        eb.fn.countAll<number>().as('requests'),
        eb.fn.min('created_at').as('first_at'),
        eb.fn.max('created_at').as('last_at'),
        eb.fn.sum<number>('input_tokens').as('input_tokens'),
        eb.fn.sum<number>('output_tokens').as('output_tokens'),
        eb.fn.sum<number>('cached_input_tokens').as('cached_input_tokens'),
        eb.fn.sum<number>('cost_micros').as('cost_micros'),
      ])
      .executeTakeFirstOrThrow();
    if (num(sums.requests) === 0) return null;
    const rows = await db
      .selectFrom('request_log')
      .selectAll()
      .where((eb) => matching(eb, filter))
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return {
      id: sessionId,
      requests: num(sums.requests),
      firstAtMs: num(sums.first_at as number),
      lastAtMs: num(sums.last_at as number),
      inputTokens: num(sums.input_tokens),
      outputTokens: num(sums.output_tokens),
      cachedInputTokens: num(sums.cached_input_tokens),
      costMicros: num(sums.cost_micros),
      entries: rows.map(toEntry),
    };
  }

  async sweep(nowMs: number, defaultRetentionDays: number, limit: number): Promise<{ deleted: number; blobKeys: string[] }> {
    const { db } = this.database;
    const custom = await db.selectFrom('request_log_settings').select(['project_id', 'retention_days']).execute();
    const cutoff = (days: number) => nowMs - days * 86_400_000;
    const ids: string[] = [];
    for (const { project_id, retention_days } of custom) {
      const rows = await db.selectFrom('request_log').select('id').where('project_id', '=', project_id).where('created_at', '<', cutoff(retention_days)).limit(limit - ids.length).execute();
      ids.push(...rows.map((r) => r.id));
      if (ids.length >= limit) break;
    }
    if (ids.length < limit) {
      let rest = db.selectFrom('request_log').select('id').where('created_at', '<', cutoff(defaultRetentionDays));
      if (custom.length > 0) rest = rest.where('project_id', 'not in', custom.map((c) => c.project_id));
      ids.push(...(await rest.limit(limit - ids.length).execute()).map((r) => r.id));
    }
    if (ids.length === 0) return { deleted: 0, blobKeys: [] };
    const blobs = await db.selectFrom('request_log_bodies').select('blob_key').where('id', 'in', ids).where('blob_key', 'is not', null).execute();
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('request_log_bodies').where('id', 'in', ids).execute();
      await trx.deleteFrom('request_log').where('id', 'in', ids).execute();
    });
    return { deleted: ids.length, blobKeys: blobs.map((b) => b.blob_key!) };
  }

  async settings(): Promise<Map<string, LoggingSettings>> {
    const rows = await this.database.db.selectFrom('request_log_settings').selectAll().execute();
    return new Map(rows.map((r) => [r.project_id, { bodies: r.bodies as BodyMode, retentionDays: r.retention_days }]));
  }

  async saveSettings(projectId: string, settings: LoggingSettings): Promise<void> {
    await this.database.db
      .insertInto('request_log_settings')
      .values({ project_id: projectId, bodies: settings.bodies, retention_days: settings.retentionDays })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ bodies: settings.bodies, retention_days: settings.retentionDays }))
      .execute();
  }
}

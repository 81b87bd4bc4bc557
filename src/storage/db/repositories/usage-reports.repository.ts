/**
 * Aggregations over usage records (the usage report and the spend report), kept apart
 * from the hot write path. Reports by tag read `usage_tags` (a row per record and tag,
 * migration 0018); the others read `usage_records`. Both are scanned by (project, time)
 * or, for every project, by time.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../database.js';
import { resultPages } from '../result-stream.js';
import type { SpendGroup, SpendQuery, SpendRow, UsageBucketRow, UsageGroup, UsageReportQuery, UsageReports } from '../../../domain/billing/usage-reports.port.js';

const DAY_MS = 86_400_000;

const GROUP_COLUMNS: Record<Exclude<UsageGroup | SpendGroup, 'day'>, string> = {
  model: 'model',
  key: 'key_id',
  project: 'project_id',
  tag: 'tag',
  end_user: 'end_user',
};

/** Reports by tag read the tag rows; every other grouping reads the records. */
const tableOf = (group: UsageGroup | SpendGroup | null) => sql.table(group === 'tag' ? 'usage_tags' : 'usage_records');

const SUMS = sql`count(*) as requests,
  cast(sum(input_tokens) as bigint) as input_tokens,
  cast(sum(output_tokens) as bigint) as output_tokens,
  cast(sum(cached_input_tokens) as bigint) as cached_input_tokens,
  cast(sum(cache_write_tokens) as bigint) as cache_write_tokens,
  cast(sum(cost_micros) as bigint) as cost_micros`;

interface SumsRow {
  requests: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
  cached_input_tokens: number | string;
  cache_write_tokens: number | string;
  cost_micros: number | string;
}

const sumsOf = (row: SumsRow) => ({
  requests: Number(row.requests),
  inputTokens: Number(row.input_tokens),
  outputTokens: Number(row.output_tokens),
  cachedInputTokens: Number(row.cached_input_tokens),
  cacheWriteTokens: Number(row.cache_write_tokens),
  costMicros: Number(row.cost_micros),
});

function rangeFilter(projectId: string | null, startMs: number, endMs: number): RawBuilder<unknown> {
  const range = sql`created_at >= ${startMs} and created_at < ${endMs}`;
  return projectId === null ? range : sql`project_id = ${projectId} and ${range}`;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The spend report's group expression. A null group (no key, no end user) reads as '' so that it sorts first on both databases. */
function spendGroup(groupBy: SpendGroup): RawBuilder<unknown> {
  if (groupBy === 'day') return sql`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
  return sql`coalesce(${sql.ref(GROUP_COLUMNS[groupBy])}, '')`;
}

/** Rows read per page while a spend report streams. */
const SPEND_PAGE_ROWS = 1_000;

export class UsageReportsRepository implements UsageReports {
  constructor(private readonly database: Database) {}

  async aggregate(query: UsageReportQuery): Promise<UsageBucketRow[]> {
    // The width comes from a fixed set (usage-report.ts), so it is written into the SQL as a literal.
    const bucket = sql`(created_at / ${sql.lit(query.bucketMs)}) * ${sql.lit(query.bucketMs)}`;
    const group = query.groupBy === null ? sql`null` : sql.ref(GROUP_COLUMNS[query.groupBy]);
    const { rows } = await sql<SumsRow & { bucket_start: number | string; grp: string | null }>`
      select ${bucket} as bucket_start, ${group} as grp, ${SUMS}
      from ${tableOf(query.groupBy)}
      where ${rangeFilter(query.projectId, query.startMs, query.endMs)}
      group by bucket_start, grp
      order by bucket_start`.execute(this.database.db);
    return rows.map((row) => ({ bucketStartMs: Number(row.bucket_start), group: row.grp, ...sumsOf(row) }));
  }

  async *spend(query: SpendQuery): AsyncGenerator<SpendRow> {
    const aggregate = sql<SumsRow & { grp: string | number }>`
      select ${spendGroup(query.groupBy)} as grp, ${SUMS}
      from ${tableOf(query.groupBy)}
      where ${rangeFilter(query.projectId, query.sinceMs, query.untilMs)}
      group by grp
      order by grp`.compile(this.database.db);
    for await (const page of resultPages(this.database, aggregate, SPEND_PAGE_ROWS)) {
      for (const row of page) yield { group: spendGroupName(query.groupBy, row.grp), ...sumsOf(row) };
    }
  }

  async lastUsedByKey(projectId: string): Promise<Map<string, number>> {
    const rows = await this.database.db
      .selectFrom('usage_records')
      .select(['key_id', sql<number>`max(created_at)`.as('last_used')])
      .where('project_id', '=', projectId)
      .where('key_id', 'is not', null)
      .groupBy('key_id')
      .execute();
    return new Map(rows.map((row) => [row.key_id!, Number(row.last_used)]));
  }
}

function spendGroupName(groupBy: SpendGroup, grp: string | number): string | null {
  if (groupBy === 'day') return dayOf(Number(grp));
  return grp === '' ? null : String(grp);
}

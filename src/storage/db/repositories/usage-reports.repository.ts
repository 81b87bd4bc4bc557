/**
 * Aggregations over usage records (the usage report and the spend report), kept apart
 * from the hot write path. Reports by tag read `usage_tags` (a row per record and tag,
 * migration 0018); the others read `usage_records`. Both are scanned by (project, time)
 * or, for every project, by time. The spend report reads the daily rollups (migration
 * 0022) for the whole days they cover (spend-query.ts).
 */
import { sql } from 'kysely';
import type { Database } from '../database.js';
import { resultPages } from '../result-stream.js';
import type { SpendGroup, SpendQuery, SpendRow, UsageBucketRow, UsageGroup, UsageReportQuery, UsageReports } from '../../../domain/billing/usage-reports.port.js';
import { RECORD_SUMS, rangeFilter, spendAggregate, type SumsRow } from './spend-query.js';

const GROUP_COLUMNS: Record<UsageGroup, string> = {
  model: 'model',
  key: 'key_id',
  project: 'project_id',
  tag: 'tag',
  end_user: 'end_user',
};

/** Reports by tag read the tag rows; every other grouping reads the records. */
const tableOf = (group: UsageGroup | null) => sql.table(group === 'tag' ? 'usage_tags' : 'usage_records');

const sumsOf = (row: SumsRow) => ({
  requests: Number(row.requests),
  inputTokens: Number(row.input_tokens),
  outputTokens: Number(row.output_tokens),
  cachedInputTokens: Number(row.cached_input_tokens),
  cacheWriteTokens: Number(row.cache_write_tokens),
  costMicros: Number(row.cost_micros),
});

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Rows read per page while a spend report streams. */
const SPEND_PAGE_ROWS = 1_000;

export class UsageReportsRepository implements UsageReports {
  constructor(private readonly database: Database) {}

  async aggregate(query: UsageReportQuery): Promise<UsageBucketRow[]> {
    // The width comes from a fixed set (usage-report.ts), so it is written into the SQL as a literal.
    const bucket = sql`(created_at / ${sql.lit(query.bucketMs)}) * ${sql.lit(query.bucketMs)}`;
    const group = query.groupBy === null ? sql`null` : sql.ref(GROUP_COLUMNS[query.groupBy]);
    const { rows } = await sql<SumsRow & { bucket_start: number | string; grp: string | null }>`
      select ${bucket} as bucket_start, ${group} as grp, ${RECORD_SUMS}
      from ${tableOf(query.groupBy)}
      where ${rangeFilter(query.projectId, query.startMs, query.endMs)}
      group by bucket_start, grp
      order by bucket_start`.execute(this.database.db);
    return rows.map((row) => ({ bucketStartMs: Number(row.bucket_start), group: row.grp, ...sumsOf(row) }));
  }

  /** Rollups for the whole days rolled up, records for the rest (spend-query.ts). */
  async *spend(query: SpendQuery): AsyncGenerator<SpendRow> {
    const state = await this.database.db.selectFrom('usage_rollup_state').select('rolled_until').executeTakeFirst();
    const aggregate = spendAggregate(query, state ? Number(state.rolled_until) : null).compile(this.database.db);
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

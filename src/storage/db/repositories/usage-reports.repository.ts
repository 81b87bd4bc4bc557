/** Aggregations over usage records (the usage report), kept apart from the hot write path. */
import { sql } from 'kysely';
import type { Database } from '../database.js';
import type { UsageBucketRow, UsageGroup, UsageReportQuery, UsageReports } from '../../../domain/billing/usage-reports.port.js';

const GROUP_COLUMNS: Record<UsageGroup, 'model' | 'key_id' | 'project_id'> = { model: 'model', key: 'key_id', project: 'project_id' };

export class UsageReportsRepository implements UsageReports {
  constructor(private readonly database: Database) {}

  async aggregate(query: UsageReportQuery): Promise<UsageBucketRow[]> {
    // The width comes from a fixed set (usage-report.ts), so it is written into the SQL as a literal.
    const bucket = sql<number>`(created_at / ${sql.lit(query.bucketMs)}) * ${sql.lit(query.bucketMs)}`;
    const group = query.groupBy === null ? sql<string | null>`null` : sql<string | null>`${sql.ref(GROUP_COLUMNS[query.groupBy])}`;
    let select = this.database.db
      .selectFrom('usage_records')
      .select([
        bucket.as('bucket_start'),
        group.as('grp'),
        sql<number>`count(*)`.as('requests'),
        sql<number>`cast(sum(input_tokens) as bigint)`.as('input_tokens'),
        sql<number>`cast(sum(output_tokens) as bigint)`.as('output_tokens'),
        sql<number>`cast(sum(cached_input_tokens) as bigint)`.as('cached_input_tokens'),
        sql<number>`cast(sum(cache_write_tokens) as bigint)`.as('cache_write_tokens'),
        sql<number>`cast(sum(cost_micros) as bigint)`.as('cost_micros'),
      ])
      .where('created_at', '>=', query.startMs)
      .where('created_at', '<', query.endMs);
    if (query.projectId !== null) select = select.where('project_id', '=', query.projectId);
    const rows = await select
      .groupBy([sql`bucket_start`, sql`grp`])
      .orderBy(sql`bucket_start`)
      .execute();
    return rows.map((row) => ({
      bucketStartMs: Number(row.bucket_start),
      group: row.grp,
      requests: Number(row.requests),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cachedInputTokens: Number(row.cached_input_tokens),
      cacheWriteTokens: Number(row.cache_write_tokens),
      costMicros: Number(row.cost_micros),
    }));
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

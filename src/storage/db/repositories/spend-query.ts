/**
 * The spend report's SQL. Whole UTC days before the rollups' `rolled_until` are read from
 * `usage_rollups` (migration 0022), everything else (today, days not rolled up yet, and the
 * partial days at the edges of a range that does not start or end on a day boundary) from
 * the records (`usage_records`, or `usage_tags` by tag), and the parts are summed per group.
 * A rollup's label is the same group expression summed over the same records, so the two
 * ways give the same answer.
 */
import { sql, type RawBuilder } from 'kysely';
import type { SpendGroup, SpendQuery } from '../../../domain/billing/usage-reports.port.js';

export const DAY_MS = 86_400_000;

/** What the rollups are kept by; the report by day sums the `model` rows (a record has exactly one model). */
export type RollupDimension = Exclude<SpendGroup, 'day'>;
export const ROLLUP_DIMENSIONS: readonly RollupDimension[] = ['key', 'model', 'tag', 'end_user'];

const COLUMNS: Record<RollupDimension, string> = { key: 'key_id', model: 'model', tag: 'tag', end_user: 'end_user' };

/** Reports by tag read the tag rows; every other grouping reads the records. */
export const recordsTableOf = (group: SpendGroup | RollupDimension) => sql.table(group === 'tag' ? 'usage_tags' : 'usage_records');

/** A day's start (ms) of a record's time, in SQL. */
export const DAY_START = sql`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;

/** The report's group of a record. A null group (no key, no end user) reads as '' so that it sorts first on both databases. */
export function spendGroup(groupBy: SpendGroup): RawBuilder<unknown> {
  if (groupBy === 'day') return DAY_START;
  return sql`coalesce(${sql.ref(COLUMNS[groupBy])}, '')`;
}

export const RECORD_SUMS = sql`count(*) as requests,
  cast(sum(input_tokens) as bigint) as input_tokens,
  cast(sum(output_tokens) as bigint) as output_tokens,
  cast(sum(cached_input_tokens) as bigint) as cached_input_tokens,
  cast(sum(cache_write_tokens) as bigint) as cache_write_tokens,
  cast(sum(cost_micros) as bigint) as cost_micros`;

const ROLLUP_SUMS = sql`cast(sum(requests) as bigint) as requests,
  cast(sum(input_tokens) as bigint) as input_tokens,
  cast(sum(output_tokens) as bigint) as output_tokens,
  cast(sum(cached_input_tokens) as bigint) as cached_input_tokens,
  cast(sum(cache_write_tokens) as bigint) as cache_write_tokens,
  cast(sum(cost_micros) as bigint) as cost_micros`;

export interface SumsRow {
  requests: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
  cached_input_tokens: number | string;
  cache_write_tokens: number | string;
  cost_micros: number | string;
}

/** (project, time) or, for every project, time. */
export function rangeFilter(projectId: string | null, startMs: number, endMs: number): RawBuilder<unknown> {
  const range = sql`created_at >= ${startMs} and created_at < ${endMs}`;
  return projectId === null ? range : sql`project_id = ${projectId} and ${range}`;
}

function recordsPart(query: SpendQuery, startMs: number, endMs: number): RawBuilder<unknown> {
  return sql`select ${spendGroup(query.groupBy)} as grp, ${RECORD_SUMS}
    from ${recordsTableOf(query.groupBy)}
    where ${rangeFilter(query.projectId, startMs, endMs)}
    group by grp`;
}

function rollupsPart(query: SpendQuery, fromDay: number, toDay: number): RawBuilder<unknown> {
  const dimension = query.groupBy === 'day' ? 'model' : query.groupBy;
  const group = query.groupBy === 'day' ? sql`day` : sql`label`;
  const project = query.projectId === null ? sql`` : sql`and project_id = ${query.projectId}`;
  return sql`select ${group} as grp, ${ROLLUP_SUMS}
    from usage_rollups
    where dimension = ${dimension} ${project} and day >= ${fromDay} and day < ${toDay}
    group by grp`;
}

/**
 * The report's rows in the order of their group, given the rollups' `rolled_until` (null
 * before the first rollup): the rollups for the range's whole days before it, the records
 * for the rest.
 */
export function spendAggregate(query: SpendQuery, rolledUntil: number | null): RawBuilder<SumsRow & { grp: string | number }> {
  const firstWholeDay = Math.ceil(query.sinceMs / DAY_MS) * DAY_MS;
  const wholeDaysUntil = Math.min(Math.floor(query.untilMs / DAY_MS) * DAY_MS, rolledUntil ?? Number.NEGATIVE_INFINITY);
  if (firstWholeDay >= wholeDaysUntil) return sql`${recordsPart(query, query.sinceMs, query.untilMs)} order by grp`;
  const parts = [rollupsPart(query, firstWholeDay, wholeDaysUntil)];
  if (query.sinceMs < firstWholeDay) parts.push(recordsPart(query, query.sinceMs, firstWholeDay));
  if (wholeDaysUntil < query.untilMs) parts.push(recordsPart(query, wholeDaysUntil, query.untilMs));
  return sql`select grp, ${ROLLUP_SUMS}
    from (${sql.join(parts, sql` union all `)}) as parts
    group by grp
    order by grp`;
}

/**
 * The spend report's daily rollups (migration 0022; src/domain/billing/spend-rollups.ts
 * says when they are made). A project's days are summed from its records per key, model,
 * tag and end user with the report's own group expressions (spend-query.ts), one
 * dimension per statement, each reading the records by (project, time).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Tables } from '../database.js';
import type { SpendRollupStore } from '../../../domain/billing/spend-rollups.port.js';
import { DAY_START, RECORD_SUMS, ROLLUP_DIMENSIONS, rangeFilter, recordsTableOf, spendGroup, type RollupDimension } from './spend-query.js';

const STATE_ID = 1;

function rollupInsert(dimension: RollupDimension, projectId: string, fromDay: number, toDay: number): RawBuilder<unknown> {
  return sql`insert into usage_rollups (dimension, project_id, day, label, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_micros)
    select ${sql.lit(dimension)}, project_id, ${DAY_START} as day_start, ${spendGroup(dimension)} as label, ${RECORD_SUMS}
    from ${recordsTableOf(dimension)}
    where ${rangeFilter(projectId, fromDay, toDay)}
    group by project_id, day_start, label`;
}

export class UsageRollupsRepository implements SpendRollupStore {
  constructor(private readonly database: Database) {}

  async rolledUntil(): Promise<number | null> {
    const row = await this.database.db.selectFrom('usage_rollup_state').select('rolled_until').where('id', '=', STATE_ID).executeTakeFirst();
    return row ? Number(row.rolled_until) : null;
  }

  async start(dayMs: number): Promise<void> {
    await this.database.db
      .insertInto('usage_rollup_state')
      .values({ id: STATE_ID, rolled_until: dayMs })
      .onConflict((c) => c.column('id').doNothing())
      .execute();
  }

  /** Each project's oldest record, found by (project, time) in the spend index, and the oldest of those. */
  async firstRecordMs(): Promise<number | null> {
    const { rows } = await sql<{ first: number | string | null }>`select min(first_at) as first from
      (select (select min(created_at) from usage_records where usage_records.project_id = projects.id) as first_at from projects) as firsts`.execute(this.database.db);
    const first = rows[0]?.first;
    return first === null || first === undefined ? null : Number(first);
  }

  async projectIds(): Promise<string[]> {
    const rows = await this.database.db.selectFrom('projects').select('id').orderBy('id').execute();
    return rows.map((row) => row.id);
  }

  /**
   * Delete and insert in one transaction, after locking the state row: a reader sees the old
   * rollups or the new ones, and two janitors rolling the same day take turns (on
   * PostgreSQL the second then deletes the first's rows, which it sees once they commit).
   */
  async roll(projectId: string, fromDay: number, toDay: number): Promise<void> {
    await this.database.db.transaction().execute(async (trx: Kysely<Tables>) => {
      await trx.updateTable('usage_rollup_state').set({ rolled_until: sql`rolled_until` }).where('id', '=', STATE_ID).execute();
      await trx
        .deleteFrom('usage_rollups')
        .where('dimension', 'in', ROLLUP_DIMENSIONS)
        .where('project_id', '=', projectId)
        .where('day', '>=', fromDay)
        .where('day', '<', toDay)
        .execute();
      for (const dimension of ROLLUP_DIMENSIONS) await rollupInsert(dimension, projectId, fromDay, toDay).execute(trx);
    });
  }

  async advance(fromDay: number, toDay: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('usage_rollup_state')
      .set({ rolled_until: toDay })
      .where('id', '=', STATE_ID)
      .where('rolled_until', '=', fromDay)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The records' count per day against the `model` rollups' (each record counts once there). */
  async staleDays(projectId: string, fromDay: number, toDay: number): Promise<number[]> {
    const { rows } = await sql<{ day_start: number | string }>`select day_start from (
        select ${DAY_START} as day_start, count(*) as records, 0 as rolled
        from usage_records where ${rangeFilter(projectId, fromDay, toDay)} group by day_start
        union all
        select day as day_start, 0 as records, sum(requests) as rolled
        from usage_rollups where dimension = 'model' and project_id = ${projectId} and day >= ${fromDay} and day < ${toDay} group by day
      ) as counts
      group by day_start
      having sum(records) <> sum(rolled)
      order by day_start`.execute(this.database.db);
    return rows.map((row) => Number(row.day_start));
  }
}

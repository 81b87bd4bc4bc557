import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * Daily rollups of usage for the spend report (src/domain/billing/spend-rollups.ts says
 * how they are kept):
 * - `usage_rollups` holds, per dimension (`key`, `model`, `tag`, `end_user`), project, UTC
 *   day and label (the key id, model, tag or end user; '' for no key or no end user), the
 *   calls, tokens and cost of that day's records. One row per dimension and label rather
 *   than per (key, model, end user, tag) combination: with thousands of end users nearly
 *   every record is its own combination, and such a table would be as large as the records.
 *   Keyed (dimension, project, day, label): a report reads one range of it, a project's or
 *   every project's. On SQLite it is WITHOUT ROWID, so that key is the table itself.
 * - `usage_rollup_state` holds one row: `rolled_until`, the start of the first UTC day not
 *   rolled up yet; every day before it has its rollups (a day without records has none).
 */
const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  let rollups = db.schema
    .createTable('usage_rollups')
    .addColumn('dimension', 'varchar(16)', (c) => c.notNull())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('label', 'varchar(256)', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_rollups_pk', ['dimension', 'project_id', 'day', 'label']);
  if (isSqlite(db)) rollups = rollups.modifyEnd(sql`without rowid`);
  await rollups.execute();
  await db.schema
    .createTable('usage_rollup_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('rolled_until', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_rollup_state').execute();
  await db.schema.dropTable('usage_rollups').execute();
}

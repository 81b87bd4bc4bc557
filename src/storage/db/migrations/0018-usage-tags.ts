import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * Usage records name the call's tags and end user, and the spend report groups a month of
 * them by key, model, tag, end user or day within a second at a million records:
 * - `usage_records.tags` keeps a record's tags as written (comma-joined: a tag holds no
 *   comma), `end_user` its end user.
 * - `usage_tags` holds one row per record and tag with the record's time and sums, keyed
 *   (project, time, tag, record): the report by tag reads only it, in key order. On SQLite
 *   it is WITHOUT ROWID, so that key is the table itself and the read touches nothing else.
 * - `usage_spend_idx` covers every other grouping: (project, time) and the columns a
 *   report groups and sums, so the report reads the index alone and never the records
 *   (on SQLite that halved a month's report). Every project's report scans it too.
 */
const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

const SPEND_COLUMNS = ['project_id', 'created_at', 'key_id', 'model', 'end_user', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cache_write_tokens', 'cost_micros'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').addColumn('tags', 'text').execute();
  await db.schema.alterTable('usage_records').addColumn('end_user', 'varchar(256)').execute();
  let tags = db.schema
    .createTable('usage_tags')
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('tag', 'varchar(64)', (c) => c.notNull())
    .addColumn('usage_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_tags_pk', ['project_id', 'created_at', 'tag', 'usage_id']);
  if (isSqlite(db)) tags = tags.modifyEnd(sql`without rowid`);
  await tags.execute();
  await db.schema.createIndex('usage_spend_idx').on('usage_records').columns(SPEND_COLUMNS).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('usage_spend_idx').execute();
  await db.schema.dropTable('usage_tags').execute();
  await db.schema.alterTable('usage_records').dropColumn('end_user').execute();
  await db.schema.alterTable('usage_records').dropColumn('tags').execute();
}

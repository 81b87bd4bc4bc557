import type { Kysely } from 'kysely';

/**
 * Usage records name the call's tags and end user; the spend report groups by either.
 * `usage_records.tags` keeps a record's tags as written (comma-joined: a tag holds no
 * comma), for reading a record back. `usage_tags` holds one row per record and tag with
 * the record's time, key, model and sums, so a report by tag reads one narrow table by
 * (project, time) instead of splitting every record's list; a record without tags adds
 * no row. Indexes by (project, time) and by time serve the spend report's range scans.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').addColumn('tags', 'text').execute();
  await db.schema.alterTable('usage_records').addColumn('end_user', 'varchar(256)').execute();
  await db.schema
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
    .addPrimaryKeyConstraint('usage_tags_pk', ['project_id', 'created_at', 'tag', 'usage_id'])
    .execute();
  await db.schema.createIndex('usage_tags_created_idx').on('usage_tags').columns(['created_at']).execute();
  await db.schema.createIndex('usage_project_created_idx').on('usage_records').columns(['project_id', 'created_at']).execute();
  await db.schema.createIndex('usage_created_idx').on('usage_records').columns(['created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('usage_created_idx').execute();
  await db.schema.dropIndex('usage_project_created_idx').execute();
  await db.schema.dropTable('usage_tags').execute();
  await db.schema.alterTable('usage_records').dropColumn('end_user').execute();
  await db.schema.alterTable('usage_records').dropColumn('tags').execute();
}

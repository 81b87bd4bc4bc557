import type { Kysely } from 'kysely';

/**
 * The request log (one row per call, every route and scope), the bodies of the calls
 * whose project logs them (inline up to a limit, else a preview and the blob holding
 * the whole), and each project's logging settings. The indexes serve the newest-first
 * list of a project, by itself and filtered by session, key or model, the operators'
 * list across projects, and the retention sweep.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('request_log')
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(64)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('route', 'varchar(128)', (c) => c.notNull())
    .addColumn('wire', 'varchar(64)', (c) => c.notNull())
    .addColumn('scope', 'varchar(16)', (c) => c.notNull())
    .addColumn('model_requested', 'varchar(256)', (c) => c.notNull())
    .addColumn('model', 'varchar(256)')
    .addColumn('provider', 'varchar(64)')
    .addColumn('deployment', 'varchar(256)')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'varchar(128)')
    .addColumn('stream', 'integer', (c) => c.notNull())
    .addColumn('session_id', 'varchar(256)')
    .addColumn('end_user', 'varchar(256)')
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'varchar(64)')
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('credit_wait_ms', 'integer')
    .addColumn('first_byte_ms', 'integer')
    .addColumn('engine_ms', 'integer')
    .addColumn('total_ms', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'text', (c) => c.notNull())
    .addColumn('fallback', 'integer', (c) => c.notNull())
    .addColumn('tools_called', 'text', (c) => c.notNull())
    .addColumn('hold_micros', 'bigint')
    .addColumn('settled_micros', 'bigint')
    .addColumn('body_logged', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('request_log_project_idx').on('request_log').columns(['project_id', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('request_log_session_idx').on('request_log').columns(['project_id', 'session_id', 'created_at']).execute();
  await db.schema.createIndex('request_log_key_idx').on('request_log').columns(['project_id', 'key_id', 'created_at desc']).execute();
  await db.schema.createIndex('request_log_model_idx').on('request_log').columns(['project_id', 'model', 'created_at desc']).execute();
  await db.schema.createIndex('request_log_created_idx').on('request_log').columns(['created_at desc', 'id desc']).execute();

  await db.schema
    .createTable('request_log_bodies')
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('truncated', 'integer', (c) => c.notNull())
    .addColumn('blob_key', 'varchar(512)')
    .execute();

  await db.schema
    .createTable('request_log_settings')
    .addColumn('project_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('bodies', 'varchar(16)', (c) => c.notNull())
    .addColumn('retention_days', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_log_settings').execute();
  await db.schema.dropTable('request_log_bodies').execute();
  for (const index of ['request_log_created_idx', 'request_log_model_idx', 'request_log_key_idx', 'request_log_session_idx', 'request_log_project_idx']) {
    await db.schema.dropIndex(index).execute();
  }
  await db.schema.dropTable('request_log').execute();
}

import { sql, type Kysely } from 'kysely';

/**
 * The request log's indexes, fewer and smaller, because every entry written pays for each
 * one on the database's cores (the cores the server shares on a small machine):
 *  - the model index goes: the model filter matches the model asked for or the model that
 *    served (`model = $m or model_requested = $m`), which one index on `model` cannot serve,
 *    so the planner walks the project's newest-first index and filters instead;
 *  - the session index holds only the calls that have a session (`where session_id is not
 *    null`); a session filter (`session_id = $s`) implies it, so it is still used.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_model_idx').execute();
  await db.schema.dropIndex('request_log_session_idx').execute();
  await db.schema
    .createIndex('request_log_session_idx')
    .on('request_log')
    .columns(['project_id', 'session_id', 'created_at'])
    .where(sql.ref('session_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_session_idx').execute();
  await db.schema.createIndex('request_log_session_idx').on('request_log').columns(['project_id', 'session_id', 'created_at']).execute();
  await db.schema.createIndex('request_log_model_idx').on('request_log').columns(['project_id', 'model', 'created_at desc']).execute();
}

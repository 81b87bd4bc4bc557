import { sql, type Kysely } from 'kysely';

const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];

/**
 * Durability and retention of files and batches:
 * - `batches.validation_heartbeat_at`: the creating request refreshes it while it streams
 *   the input, so a sweep can tell a validation that died with its process (stale) from
 *   one that is merely long (fresh). NULL on older rows: the sweep reads `created_at`.
 * - `files.purged_at`: set once the blob of a deleted or expired record is gone, so the
 *   janitor revisits only what still holds storage.
 * - Line results and shards of batches that already ended are dropped: from now on they
 *   are dropped when a batch ends (see BatchFinalizationRepository.finish).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column.
  await db.schema.alterTable('batches').addColumn('validation_heartbeat_at', 'bigint').execute();
  await db.schema.alterTable('files').addColumn('purged_at', 'bigint').execute();
  await db.schema.createIndex('files_expiry_idx').on('files').columns(['purged_at', 'expires_at']).execute();
  await db.schema.createIndex('files_deleted_idx').on('files').columns(['purged_at', 'deleted_at']).execute();

  const ended = sql.join(TERMINAL.map((s) => sql.lit(s)));
  await sql`delete from batch_line_results where batch_id in (select id from batches where status in (${ended}))`.execute(db);
  await sql`delete from batch_shards where batch_id in (select id from batches where status in (${ended}))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('files_deleted_idx').execute();
  await db.schema.dropIndex('files_expiry_idx').execute();
  await db.schema.alterTable('files').dropColumn('purged_at').execute();
  await db.schema.alterTable('batches').dropColumn('validation_heartbeat_at').execute();
}

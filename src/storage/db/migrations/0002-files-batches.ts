import type { Kysely } from 'kysely';

/**
 * Files, batches, batch shards (the unit of work a runner leases) and per-line results
 * (the durable record that makes each line run and bill once). Times are epoch ms;
 * booleans are 0/1 integers so both dialects read them the same way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull().references('projects.id'))
    .addColumn('purpose', 'varchar(32)', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('is_error', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('batch_id', 'varchar(64)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_project_id_idx').on('files').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('files_blob_key_idx').on('files').column('blob_key').execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull().references('projects.id'))
    .addColumn('created_by_key_id', 'varchar(64)')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text', (c) => c.notNull())
    .addColumn('input_blob_key', 'text')
    .addColumn('completion_window', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('errors', 'text')
    .addColumn('total_lines', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completed_lines', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_lines', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('shards_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('output_file_id', 'varchar(64)')
    .addColumn('error_file_id', 'varchar(64)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('lease_owner', 'varchar(128)')
    .addColumn('lease_expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('batches_project_id_idx').on('batches').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('batches_status_idx').on('batches').columns(['status', 'id']).execute();
  await db.schema.createIndex('batches_input_blob_idx').on('batches').columns(['input_blob_key', 'status']).execute();

  await db.schema
    .createTable('batch_shards')
    .addColumn('id', 'varchar(96)', (c) => c.primaryKey())
    .addColumn('batch_id', 'varchar(64)', (c) => c.notNull().references('batches.id'))
    .addColumn('shard_no', 'integer', (c) => c.notNull())
    .addColumn('first_line', 'integer', (c) => c.notNull())
    .addColumn('last_line', 'integer', (c) => c.notNull())
    .addColumn('start_byte', 'bigint', (c) => c.notNull())
    .addColumn('end_byte', 'bigint', (c) => c.notNull())
    .addColumn('line_count', 'integer', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('lease_owner', 'varchar(128)')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('batch_shards_batch_idx').on('batch_shards').columns(['batch_id', 'state']).execute();
  await db.schema.createIndex('batch_shards_state_idx').on('batch_shards').columns(['state', 'lease_expires_at']).execute();

  await db.schema
    .createTable('batch_line_results')
    .addColumn('batch_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('line_no', 'integer', (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'varchar(64)')
    .addColumn('line_json', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('batch_line_results_pk', ['batch_id', 'line_no'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('batch_line_results').execute();
  await db.schema.dropTable('batch_shards').execute();
  await db.schema.dropTable('batches').execute();
  await db.schema.dropTable('files').execute();
}

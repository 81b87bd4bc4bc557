import type { Kysely } from 'kysely';

/**
 * Stored responses (`POST /v1/responses` with `store`, the default) and background
 * responses, with the events a background run produced.
 * - `responses`: one row per stored response, scoped to its project and owner (the
 *   caller's subject: an agent of a storefront sees only its own). `resource` is the
 *   object as last known, `input_items` this turn's input (with ids), `conversation` what a
 *   continuation starts from (the earlier turns, this turn's input and its output; NULL
 *   until the response ends). A background response also keeps what its run needs
 *   (`request`, `prior_items`, who created and pays for it) and the run's lease; `settled`
 *   turns 1 in the transaction that writes its usage, so a run is billed at most once.
 * - `response_events`: a background run's stream events, by sequence number.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('owner', 'varchar(160)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('background', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('input_items', 'text', (c) => c.notNull())
    .addColumn('conversation', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('request', 'text')
    .addColumn('prior_items', 'text')
    .addColumn('key_id', 'varchar(64)')
    .addColumn('payer_kind', 'varchar(32)')
    .addColumn('payer_id', 'varchar(128)')
    .addColumn('request_id', 'varchar(128)')
    .addColumn('lease_owner', 'varchar(128)')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('answer_started', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('responses_expiry_idx').on('responses').column('expires_at').execute();
  await db.schema.createIndex('responses_runnable_idx').on('responses').columns(['settled', 'status', 'lease_expires_at']).execute();

  await db.schema
    .createTable('response_events')
    .addColumn('response_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('response_events_pk', ['response_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('response_events').execute();
  await db.schema.dropIndex('responses_runnable_idx').execute();
  await db.schema.dropIndex('responses_expiry_idx').execute();
  await db.schema.dropTable('responses').execute();
}

import type { Kysely } from 'kysely';

/**
 * The settlement outbox (src/domain/outbox): messages to third parties (an intermediary's
 * usage report) written in the transaction of the usage record they belong to, and
 * delivered later by the OutboxDeliverer. `payload` is JSON text; times are epoch ms.
 * A message is unique per target kind and idempotency key, so the same settlement is
 * never enqueued twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('target_kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('idempotency_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'varchar(128)')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema.createIndex('outbox_idempotency_idx').on('outbox').columns(['target_kind', 'idempotency_key']).unique().execute();
  await db.schema.createIndex('outbox_due_idx').on('outbox').columns(['state', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('outbox').execute();
}

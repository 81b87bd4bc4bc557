import type { Kysely } from 'kysely';

/**
 * The durable outbox (src/domain/outbox): messages to other systems, written in the
 * transaction of the state they report and delivered by a worker. One row per message;
 * `(target, idempotency_key)` is unique, so a message cannot be enqueued twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox_messages')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('target', 'varchar(64)', (c) => c.notNull())
    .addColumn('idempotency_key', 'varchar(300)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addUniqueConstraint('outbox_messages_target_key_uq', ['target', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('outbox_messages_due_idx').on('outbox_messages').columns(['target', 'state', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('outbox_messages').execute();
}

import type { Kysely } from 'kysely';

/**
 * What a key spent in a budget's window is the sum of its usage records' cost since the
 * window began: an index on (key_id, created_at) with the cost beside them answers it
 * from the index alone, on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('usage_key_spend_idx').on('usage_records').columns(['key_id', 'created_at', 'cost_micros']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('usage_key_spend_idx').execute();
}

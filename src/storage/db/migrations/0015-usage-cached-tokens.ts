import type { Kysely } from 'kysely';

/**
 * Usage records keep the input tokens an engine read from its prompt cache, and those it
 * wrote to it, apart: they are priced at the model's cached-input and cache-write prices
 * and reported on their own. Both are part of `input_tokens`; rows from before read 0.
 */
const COLUMNS = ['cached_input_tokens', 'cache_write_tokens'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('usage_records').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('usage_records').dropColumn(column).execute();
}

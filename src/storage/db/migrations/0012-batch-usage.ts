import type { Kysely } from 'kysely';

/**
 * Batches of every endpoint: the batch's `model` (its lines' model), its `usage` summed
 * over its lines, and `output_expires_after.seconds`. Each line result keeps the tokens
 * its call used, so a running batch's usage is the sum of its recorded lines (each
 * recorded once), and the transaction that ends the batch writes that sum on the batch
 * before it drops the lines. Older rows read zero usage and no model.
 */
const TOKEN_COLUMNS = ['input_tokens', 'cached_tokens', 'output_tokens', 'reasoning_tokens'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('model', 'text').execute();
  await db.schema.alterTable('batches').addColumn('output_expires_after', 'integer').execute();
  for (const column of TOKEN_COLUMNS) {
    await db.schema.alterTable('batches').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('batch_line_results').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of TOKEN_COLUMNS) {
    await db.schema.alterTable('batch_line_results').dropColumn(column).execute();
    await db.schema.alterTable('batches').dropColumn(column).execute();
  }
  await db.schema.alterTable('batches').dropColumn('output_expires_after').execute();
  await db.schema.alterTable('batches').dropColumn('model').execute();
}

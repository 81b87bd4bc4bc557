import type { Kysely } from 'kysely';

/**
 * A key's policy, on the key: the models it may reach (a JSON array of globs), its budget
 * (a limit in micro-dollars per UTC window), its own request and token rates, when it
 * expires, the operator's metadata (a JSON object) and its default tags (a JSON array).
 * NULL is "not set". Rotation keeps the secret it replaced beside the new one until the
 * grace period the operator chose ends (`previous_key_hash`, `previous_valid_until`).
 */
const COLUMNS = [
  ['models', 'text'],
  ['budget_limit_micros', 'bigint'],
  ['budget_window', 'varchar(16)'],
  ['rpm', 'integer'],
  ['tpm', 'integer'],
  ['expires_at', 'bigint'],
  ['metadata', 'text'],
  ['tags', 'text'],
  ['previous_key_hash', 'varchar(128)'],
  ['previous_valid_until', 'bigint'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, type] of COLUMNS) await db.schema.alterTable('api_keys').addColumn(column, type).execute();
  await db.schema.createIndex('api_keys_previous_hash_idx').on('api_keys').column('previous_key_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_previous_hash_idx').execute();
  for (const [column] of COLUMNS) await db.schema.alterTable('api_keys').dropColumn(column).execute();
}

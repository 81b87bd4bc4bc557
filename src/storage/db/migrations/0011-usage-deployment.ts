import type { Kysely } from 'kysely';

/**
 * Usage records name the deployment that served the call: its operator-facing id from
 * sluice.yaml (never a URL). NULL for in-process models and for records written before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').addColumn('deployment', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').dropColumn('deployment').execute();
}

import type { Kysely } from 'kysely';

/**
 * A deleted project keeps its row as a tombstone (`deleted_at`, epoch ms): its usage
 * records and credit grants stay for accounting and still reference it, a call in flight
 * when it was deleted still records its usage, and every lookup of a project skips it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('deleted_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('deleted_at').execute();
}

import type { Kysely } from 'kysely';

/**
 * Usage records name the coding agent's session the call belonged to (Claude Code's
 * `X-Claude-Code-Session-Id`). NULL for calls without one and for records written before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').addColumn('session_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_records').dropColumn('session_id').execute();
}

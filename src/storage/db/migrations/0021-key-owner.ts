import type { Kysely } from 'kysely';

/**
 * Who a key belongs to: the user whose console session made it (`owner_user_id`). A member
 * lists, rotates and revokes only the keys they own; NULL is a key made by an operator, the
 * admin token or the CLI, which only the project's admins and owners manage. The index
 * answers a member's list of their keys in a project.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('owner_user_id', 'varchar(64)').execute();
  await db.schema.createIndex('api_keys_owner_idx').on('api_keys').columns(['project_id', 'owner_user_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_owner_idx').execute();
  await db.schema.alterTable('api_keys').dropColumn('owner_user_id').execute();
}

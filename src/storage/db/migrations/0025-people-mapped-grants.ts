import type { Kysely } from 'kysely';

/**
 * What an identity provider's claims gave apart from what a person was given by hand, so
 * that each sign-in can take back what the claims no longer give.
 * `project_members.granted_by`: `admin` (the admin API or the console; rows from before) or
 * `mapping` (the sign-in's role rules). `users.operator_mapped`: 1 while the last sign-in's
 * claims made the user an operator; `users.operator` stays the flag set by hand.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('project_members').addColumn('granted_by', 'varchar(16)', (c) => c.notNull().defaultTo('admin')).execute();
  await db.schema.alterTable('users').addColumn('operator_mapped', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('operator_mapped').execute();
  await db.schema.alterTable('project_members').dropColumn('granted_by').execute();
}

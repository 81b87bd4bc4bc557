import type { Kysely } from 'kysely';

/**
 * The console's tables. `console_sessions`: sign-in sessions. The browser holds a random session id in a cookie; only its
 * SHA-256 is stored here. An operator session has no project; a developer session names
 * the API key it signed in with, and ends when that key is revoked (the strategy joins
 * the key on every request). `credit_grants`: every change of a project's credit by an
 * operator, with its reason, written with the balance change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('project_id', 'varchar(64)', (c) => c.references('projects.id'))
    .addColumn('key_id', 'varchar(64)', (c) => c.references('api_keys.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_expires_idx').on('console_sessions').column('expires_at').execute();

  await db.schema
    .createTable('credit_grants')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull().references('projects.id'))
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credit_grants_project_idx').on('credit_grants').columns(['project_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credit_grants').execute();
  await db.schema.dropTable('console_sessions').execute();
}

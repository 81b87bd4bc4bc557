import type { Kysely } from 'kysely';

/**
 * People and the audit log. `users`: console users (from the admin API or provisioned at
 * their first OIDC sign-in, by issuer and subject), `operator` 1 for an operator.
 * `project_members`: a user's role in a project. `console_sessions.user_id`: the user a
 * session belongs to (NULL for the admin token's or an API key's session).
 * `sign_in_flows`: an OIDC sign-in between its start and its callback, by the hash of the
 * flow id the browser holds; used once. `audit_log`: append-only, written only by inserts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('email', 'varchar(320)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(200)')
    .addColumn('operator', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('oidc_issuer', 'varchar(512)')
    .addColumn('oidc_subject', 'varchar(255)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_oidc_idx').on('users').columns(['oidc_issuer', 'oidc_subject']).unique().execute();

  await db.schema
    .createTable('project_members')
    .addColumn('project_id', 'varchar(64)', (c) => c.notNull().references('projects.id'))
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
    .execute();
  await db.schema.createIndex('project_members_user_idx').on('project_members').column('user_id').execute();

  await db.schema.alterTable('console_sessions').addColumn('user_id', 'varchar(64)', (c) => c.references('users.id')).execute();

  await db.schema
    .createTable('sign_in_flows')
    .addColumn('id_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('state', 'varchar(128)', (c) => c.notNull())
    .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
    .addColumn('code_verifier', 'varchar(128)', (c) => c.notNull())
    .addColumn('redirect_url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_flows_expires_idx').on('sign_in_flows').column('expires_at').execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('actor_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('actor_id', 'varchar(320)')
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(320)')
    .addColumn('project_id', 'varchar(64)')
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('ip', 'varchar(64)')
    .execute();
  await db.schema.createIndex('audit_log_project_idx').on('audit_log').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('audit_log_actor_idx').on('audit_log').columns(['actor_id', 'id']).execute();
  await db.schema.createIndex('audit_log_action_idx').on('audit_log').columns(['action', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropTable('sign_in_flows').execute();
  await db.schema.alterTable('console_sessions').dropColumn('user_id').execute();
  await db.schema.dropTable('project_members').execute();
  await db.schema.dropTable('users').execute();
}

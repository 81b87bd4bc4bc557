import { sql, type Kysely } from 'kysely';

/**
 * Who paid: `payer_kind` and `payer_id` on usage records and batches (kinds as
 * `PayerRef` in src/domain/identity/caller.ts: project, intermediary, agent, receipt).
 * Existing rows were all paid from their project's credit, so they become `project`
 * payers with `payer_id = project_id`.
 *
 * `payer_kind` defaults to `project` and `payer_id` may be NULL on both dialects (SQLite
 * cannot add a NOT NULL column without a default, nor tighten one without rebuilding the
 * table): a row written by a replica still running the previous release during a
 * rolling upgrade is read as paid by its project, which is what that release charged.
 */
const TABLES = ['usage_records', 'batches'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    // One column per statement: SQLite's ALTER TABLE adds a single column.
    await db.schema
      .alterTable(table)
      .addColumn('payer_kind', 'varchar(16)', (c) => c.notNull().defaultTo('project'))
      .execute();
    await db.schema.alterTable(table).addColumn('payer_id', 'varchar(64)').execute();
    await sql`update ${sql.table(table)} set payer_id = project_id where payer_id is null`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).dropColumn('payer_id').execute();
    await db.schema.alterTable(table).dropColumn('payer_kind').execute();
  }
}

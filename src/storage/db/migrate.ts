/** Applies (or checks) the versioned migrations; used at start-up, by `sluice migrate` and /readyz. */
import { Migrator, sql, type MigrationProvider } from 'kysely';
import type { Database } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface MigrationReport {
  applied: string[];
}

/**
 * On PostgreSQL the migration tables are pinned to the connection's current schema:
 * Kysely otherwise looks for them across every schema, so a database holding several
 * Sluice schemas (one per tenant deployment, or per test suite) could skip creating its own.
 */
export async function migratorFor(database: Database): Promise<Migrator> {
  if (database.flavor !== 'postgres') return new Migrator({ db: database.db, provider });
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
  return new Migrator({ db: database.db, provider, migrationTableSchema: rows[0]?.schema ?? 'public' });
}

export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = await migratorFor(database);
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/** Names of migrations known to the code but not yet applied to the database. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrator = await migratorFor(database);
  const all = await migrator.getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

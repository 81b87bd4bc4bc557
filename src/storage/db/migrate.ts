/** Applies (or checks) the versioned migrations; used at start-up, by `sluice migrate` and /readyz. */
import { Migrator, type MigrationProvider } from 'kysely';
import type { Database } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface MigrationReport {
  applied: string[];
}

export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({ db: database.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/** Names of migrations known to the code but not yet applied to the database. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrator = new Migrator({ db: database.db, provider });
  const all = await migrator.getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

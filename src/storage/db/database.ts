/**
 * The database handle: a Kysely instance over better-sqlite3 (embedded default) or
 * pg (PostgreSQL), with one table interface for both. Repositories are the only code
 * that builds queries on it.
 */
import pg from 'pg';
import { CompiledQuery, Kysely, type Compilable, type Dialect } from 'kysely';
import type { DatabaseConfig } from '../../config/schema.js';
import { sqliteDialect, type SqlStatement, type SyncSqlite } from './sqlite.js';
import { asynchronousCommitDialect, postgresDialect } from './postgres-dialect.js';
import { postgresPool } from './prepared-statements.js';

export type { SqlStatement, SyncSqlite } from './sqlite.js';

import type { Tables } from './tables.js';

export type * from './tables.js';

export type SqlFlavor = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<Tables>;
  flavor: SqlFlavor;
  /** Embedded SQLite only: synchronous statements for the hottest queries (null on PostgreSQL). */
  sync: SyncSqlite | null;
  /**
   * Where usage records and their debits are committed: `db` itself, or on PostgreSQL with
   * DATABASE_USAGE_SYNCHRONOUS_COMMIT=false its own connections that commit without
   * waiting for the disk (postgres-dialect.ts says what that risks).
   */
  usageDb: Kysely<Tables>;
  close(): Promise<void>;
}

/** A statement as a query Kysely executes (for the path that is not synchronous). */
export const kyselyQuery = <R = unknown>(statement: SqlStatement): CompiledQuery<R> =>
  CompiledQuery.raw(statement.sql, [...statement.parameters]) as CompiledQuery<R>;

/**
 * Hot queries compiled once and re-run with new parameters: for these short statements
 * Kysely's builder and compiler cost more than the database's execution. One instance
 * per repository, so per database and dialect; the first use of a key compiles `build()`
 * and checks that its parameters are exactly `parameters`, in order (the caller lists
 * them in the order the query binds them), so a wrong order fails at once, not silently.
 */
export class CompiledQueries {
  readonly #sql = new Map<string, string>();

  /** The statement with these parameters, compiled by `build()` on the key's first use. */
  statement(key: string, build: () => Compilable<unknown>, parameters: unknown[]): SqlStatement {
    let text = this.#sql.get(key);
    if (text === undefined) {
      const compiled = build().compile();
      const same = compiled.parameters.length === parameters.length && compiled.parameters.every((p, i) => p === parameters[i]);
      if (!same) throw new Error(`compiled query ${key}: parameters differ from the builder's`);
      text = compiled.sql;
      this.#sql.set(key, text);
    }
    return { sql: text, parameters };
  }
}

// int8 (bigint) and numeric arrive as strings from pg by default; every such column
// here holds micro-dollars, milliseconds or counts, all well inside 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

/** Wraps an already-built dialect (used by tests to run the same code on PGlite). */
export function databaseFromDialect(
  dialect: Dialect,
  flavor: SqlFlavor,
  options: { sync?: SyncSqlite; usageDialect?: Dialect; beforeClose?: () => Promise<void>; afterClose?: () => Promise<void> } = {},
): Database {
  const db = new Kysely<Tables>({ dialect });
  const usageDb = options.usageDialect ? new Kysely<Tables>({ dialect: options.usageDialect }) : db;
  return {
    db,
    flavor,
    sync: options.sync ?? null,
    usageDb,
    async close() {
      await options.beforeClose?.();
      await db.destroy();
      if (usageDb !== db) await usageDb.destroy();
      await options.afterClose?.();
    },
  };
}

export function openDatabase(config: DatabaseConfig): Database {
  if (config.kind === 'postgres') {
    const { preparedStatements } = config;
    const dialect = postgresDialect(postgresPool(config.url, { max: 10, preparedStatements }));
    if (config.usageSynchronousCommit) return databaseFromDialect(dialect, 'postgres');
    return databaseFromDialect(dialect, 'postgres', { usageDialect: asynchronousCommitDialect(config.url, preparedStatements) });
  }
  const { dialect, sync, checkpointer } = sqliteDialect(config.path);
  // The checkpointer stops first: the main connection's close then checkpoints what is left.
  return databaseFromDialect(dialect, 'sqlite', { sync, beforeClose: async () => checkpointer?.close() });
}

/**
 * The embedded database: one better-sqlite3 connection (sqlite-driver.ts picks which) in WAL mode behind Kysely, the
 * synchronous handle the hottest queries use (SyncSqlite), and the thread that
 * checkpoints its WAL (sqlite-checkpointer.ts).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { SqliteDialect, type Dialect } from 'kysely';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { sqliteDriver } from './sqlite-driver.js';

/**
 * Synchronous access to the embedded SQLite connection, for the queries every request
 * makes (the credit check, the usage transaction): no promise hops and no wait for
 * Kysely's connection lock. Usable only while no transaction is open on the connection
 * (`idle`), so a statement run here never becomes part of another caller's transaction.
 * Each call is one statement or one transaction, complete before anything else runs; code
 * that needs several statements to be seen together uses a transaction (as migrations do).
 */
export class SyncSqlite {
  readonly #inTransaction: (work: () => void) => void;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly prepare: (sql: string) => SQLite.Statement,
  ) {
    this.#inTransaction = sqlite.transaction((work: () => void) => work());
  }

  get idle(): boolean {
    return this.sqlite.open && !this.sqlite.inTransaction;
  }

  all<R>(statement: SqlStatement): R[] {
    return this.prepare(statement.sql).all(statement.parameters as unknown[]) as R[];
  }

  /** The first row, or undefined. */
  get<R>(statement: SqlStatement): R | undefined {
    return this.prepare(statement.sql).get(statement.parameters as unknown[]) as R | undefined;
  }

  /** Runs the statements in one transaction (all or none), synchronously. */
  transaction(statements: readonly SqlStatement[]): void {
    this.#inTransaction(() => {
      for (const statement of statements) this.prepare(statement.sql).run(statement.parameters as unknown[]);
    });
  }
}

/** SQL text and its parameters (a Kysely CompiledQuery is one). */
export interface SqlStatement {
  sql: string;
  parameters: readonly unknown[];
}

/** How often the checkpointer thread moves the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 500;

export function sqliteDialect(file: string): { dialect: Dialect; sync: SyncSqlite; checkpointer: SqliteCheckpointer | null } {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const { Database } = sqliteDriver();
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  // After a checkpoint the WAL is rewritten from its start; this bounds what it keeps on disk.
  sqlite.pragma('journal_size_limit = 67108864');
  const checkpointer = file === ':memory:' ? null : new SqliteCheckpointer(sqlite, file, CHECKPOINT_INTERVAL_MS);
  // Kysely prepares every query anew; reusing prepared statements saves SQLite's parse and
  // plan on the hot path. Safe: every statement here runs to completion synchronously, one
  // at a time, whether Kysely or SyncSqlite runs it.
  const statements = new Map<string, SQLite.Statement>();
  const database = {
    close: () => void sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= 500) statements.clear();
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
  return { dialect: new SqliteDialect({ database }), sync: new SyncSqlite(sqlite, database.prepare), checkpointer };
}

/**
 * The database handle: a Kysely instance over better-sqlite3 (embedded default) or
 * pg (PostgreSQL), with one table interface for both. Repositories are the only code
 * that builds queries on it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type Dialect } from 'kysely';
import type { DatabaseConfig } from '../../config/schema.js';

export interface ProjectsTable {
  id: string;
  name: string;
  balance_micros: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface UsageRecordsTable {
  id: string;
  project_id: string;
  key_id: string | null;
  model: string;
  route: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  request_id: string;
  status: number;
  created_at: number;
}

/** Every table; later migrations add theirs here. */
export interface Tables {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  usage_records: UsageRecordsTable;
}

export type SqlFlavor = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<Tables>;
  flavor: SqlFlavor;
  close(): Promise<void>;
}

// int8 (bigint) and numeric arrive as strings from pg by default; every such column
// here holds micro-dollars, milliseconds or counts, all well inside 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

function sqliteDialect(file: string): Dialect {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  return new SqliteDialect({ database: sqlite });
}

function postgresDialect(url: string): Dialect {
  return new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) });
}

/** Wraps an already-built dialect (used by tests to run the same code on PGlite). */
export function databaseFromDialect(dialect: Dialect, flavor: SqlFlavor, onClose?: () => Promise<void>): Database {
  const db = new Kysely<Tables>({ dialect });
  return {
    db,
    flavor,
    async close() {
      await db.destroy();
      await onClose?.();
    },
  };
}

export function openDatabase(config: DatabaseConfig): Database {
  return config.kind === 'postgres'
    ? databaseFromDialect(postgresDialect(config.url), 'postgres')
    : databaseFromDialect(sqliteDialect(config.path), 'sqlite');
}

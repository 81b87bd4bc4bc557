/**
 * Databases for the storage suites: SQLite always; PostgreSQL on the real server when
 * one answers (each suite in its own schema), else PGlite in process — unless
 * SLUICE_TEST_REQUIRE_POSTGRES=1 (set by CI), which makes an unreachable server a failure.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Kysely } from 'kysely';
import { KyselyPGlite } from 'kysely-pglite';
import { databaseFromDialect, openDatabase, type Database, type SqlFlavor } from '../../src/storage/db/database.js';
import { postgresDialect } from '../../src/storage/db/postgres-dialect.js';
import { postgresPool } from '../../src/storage/db/prepared-statements.js';

export const POSTGRES_URL = process.env.SLUICE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<boolean> | undefined;
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      if (process.env.SLUICE_TEST_REQUIRE_POSTGRES === '1') {
        throw new Error(`PostgreSQL required (SLUICE_TEST_REQUIRE_POSTGRES=1) but ${POSTGRES_URL} is unreachable`);
      }
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

export function tempDir(prefix = 'sluice-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export function sqliteDatabase(dir = tempDir()): Database {
  return openDatabase({ kind: 'sqlite', path: path.join(dir, 'sluice.db') });
}

/**
 * A fresh schema on the real server, the URL that selects it, and how to drop it again.
 * Test files in parallel create and drop such schemas on one server all the time, so no
 * query may name another schema: Kysely's stock introspector did (has_schema_privilege and
 * pg_get_serial_sequence on every schema's name, run in a parallel worker once the catalog
 * is large), and a sibling's schema dropped meanwhile failed a server's start-up migration
 * with 3F000 `schema "t_…" does not exist`. Sluice's dialect reads only the current schema
 * (src/storage/db/postgres-dialect.ts; test/integration/storage/postgres-dialect.test.ts
 * churns schemas to prove it). `settings` are more settings for each of the URL's sessions.
 */
export async function postgresSchema(settings: Record<string, string> = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const options = Object.entries({ search_path: schema, ...settings }).map(([name, value]) => `-c ${name}=${value}`);
  const url = `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(options.join(' '))}`;
  const drop = async () => {
    const cleanup = new pg.Client({ connectionString: POSTGRES_URL });
    await cleanup.connect();
    await cleanup.query(`drop schema if exists ${schema} cascade`);
    await cleanup.end();
  };
  return { url, drop };
}

/** A fresh schema on the real server; dropped again on close. Also returns a URL that selects it. */
export async function postgresSchemaDatabase(settings: Record<string, string> = {}): Promise<{ database: Database; url: string }> {
  const { url, drop } = await postgresSchema(settings);
  // As a server opens it (storage/db/database.ts): repeated statements prepared.
  const pool = postgresPool(url, { max: 10, preparedStatements: true });
  const database = databaseFromDialect(postgresDialect(pool), 'postgres', { afterClose: drop });
  return { database, url };
}

/** A Kysely handle on tables a test makes itself. */
export type LooseDb = Kysely<Record<string, Record<string, unknown>>>;

/**
 * One pooled connection, as the server's pool makes them (so every query sees the same
 * session: its prepared statements), on a fresh schema; `close` ends it and drops the schema.
 */
export async function onePostgresConnection(preparedStatements: boolean): Promise<{ db: LooseDb; close(): Promise<void> }> {
  const { url, drop } = await postgresSchema();
  const db: LooseDb = new Kysely({ dialect: postgresDialect(postgresPool(url, { max: 1, preparedStatements })) });
  return { db, close: async () => (await db.destroy(), await drop()) };
}

export async function pgliteDatabase(): Promise<Database> {
  const pglite = new KyselyPGlite({ parsers: { 20: (value: string) => Number(value) } });
  return databaseFromDialect(pglite.dialect, 'postgres', {
    afterClose: async () => {
      await pglite.client.close().catch(() => {});
    },
  });
}

export interface DialectCase {
  name: string;
  flavor: SqlFlavor;
  open(): Promise<Database>;
}

/** The dialect loop every storage suite runs over (the kysely DIALECTS pattern). */
export async function dialectCases(): Promise<DialectCase[]> {
  const cases: DialectCase[] = [{ name: 'sqlite', flavor: 'sqlite', open: async () => sqliteDatabase() }];
  if (await postgresReachable()) {
    cases.push({ name: 'postgres', flavor: 'postgres', open: async () => (await postgresSchemaDatabase()).database });
  } else {
    cases.push({ name: 'postgres (pglite)', flavor: 'postgres', open: pgliteDatabase });
  }
  return cases;
}

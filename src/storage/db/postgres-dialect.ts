/**
 * The PostgreSQL dialect Sluice runs on: Kysely's, with an introspector that reads only
 * the connection's current schema.
 *
 * Kysely's own introspector lists the tables of every schema in the database and calls
 * `has_schema_privilege()` and `pg_get_serial_sequence()` with each schema's name. Those
 * resolve the name against the current catalog, not the query's snapshot, so a schema
 * dropped while the query runs (another deployment's, or another test server's, on a
 * shared server) fails the whole query with 3F000 `schema "…" does not exist`, often
 * raised in a parallel worker once the catalog is large. The migrator (the only user of
 * introspection here) needs this schema's tables alone, and a schema in use is not
 * dropped under its own server.
 */
import type pg from 'pg';
import { postgresPool } from './prepared-statements.js';
import {
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/** Kysely's migration tables, left out unless asked for (as Kysely's introspector does). */
const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];

interface ColumnRow {
  schema: string;
  table: string;
  table_type: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  auto_incrementing: string | null;
  column_description: string | null;
}

export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ nspname: string }>`select nspname from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((row) => ({ name: row.nspname }));
  }

  /** The tables and views of the current schema, with their columns in order. */
  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select ns.nspname as schema, c.relname as table, c.relkind as table_type, a.attname as column,
        typ.typname as type, dtns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as auto_incrementing,
        col_description(a.attrelid, a.attnum) as column_description
      from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace dtns on dtns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum >= 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && MIGRATION_TABLES.includes(row.table)) continue;
      let table = tables.get(row.table);
      if (!table) tables.set(row.table, (table = { name: row.table, schema: row.schema, isView: row.table_type === 'v', columns: [] }));
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing !== null,
        ...(row.column_description === null ? {} : { comment: row.column_description }),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

/** The dialect over `pool`, introspecting only the connection's current schema. */
export function postgresDialect(pool: pg.Pool): PostgresDialect {
  return new CurrentSchemaPostgresDialect({ pool });
}

/**
 * Connections for usage commits that do not wait for the WAL flush
 * (`synchronous_commit = off` for the session). A commit is visible to every replica at
 * once, as before; what a PostgreSQL crash (or the host's) can lose is the commits of the
 * last moment (up to three times `wal_writer_delay`, 600 ms by default): calls served and
 * neither recorded nor debited, as SQLite's `synchronous = NORMAL` can lose its last
 * commits on power loss. Nothing is charged twice and no balance is credited: these
 * transactions only insert usage records and outbox entries and draw balances down.
 * The usage writer keeps one transaction in flight, so two connections are enough.
 */
export function asynchronousCommitDialect(url: string, preparedStatements: boolean): PostgresDialect {
  const pool = postgresPool(url, { max: 2, preparedStatements });
  // Queued on the new connection ahead of the query that asked for it; should it fail, the
  // connection stays synchronous, the durable side.
  pool.on('connect', (client) => void client.query('set synchronous_commit = off').catch(() => {}));
  return postgresDialect(pool);
}

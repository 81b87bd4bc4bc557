/**
 * The PostgreSQL dialect on the real server (PGlite has one schema and no WAL flush to
 * skip): introspection reads only the current schema, so another schema dropped meanwhile
 * cannot fail a migration; usage commits skip the WAL flush only when configured, and a
 * server so configured still serves a burst exactly as far as the credit goes.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { POSTGRES_URL, postgresReachable, postgresSchema, postgresSchemaDatabase } from '../../helpers/databases.js';
import { openDatabase, type Tables } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { usageRecord } from '../../helpers/usage-records.js';
import { call, startTestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';

const reachable = await postgresReachable();

const SLUICE_TABLES = [
  'api_keys', 'audit_log', 'batch_line_results', 'batch_shards', 'batches', 'console_sessions', 'credit_grants', 'files', 'outbox',
  'project_members', 'projects', 'request_log', 'request_log_bodies', 'request_log_settings', 'response_events', 'responses',
  'sign_in_flows', 'storefront_accounts', 'storefront_checkouts', 'storefront_ledger', 'usage_records', 'usage_rollup_state', 'usage_rollups', 'usage_tags', 'users',
];

/**
 * Planner costs that make PostgreSQL scan even a small catalog with parallel workers, as
 * it does a large one (a long CI run's, where the 3F000 was raised in a parallel worker).
 */
const PARALLEL_ALWAYS = { parallel_setup_cost: '0', parallel_tuple_cost: '0', min_parallel_table_scan_size: '0', min_parallel_index_scan_size: '0' };

const synchronousCommit = async (db: Kysely<Tables>) =>
  (await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(db)).rows[0]!.synchronous_commit;

/** Creates and drops a schema with tables, over and over, until stopped. */
function churnSchemas(): { stop(): Promise<void> } {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  let running = true;
  const done = (async () => {
    await admin.connect();
    for (let i = 0; running; i++) {
      const schema = `t_churn_${process.pid}_${i % 3}`;
      await admin.query(`create schema ${schema}; create table ${schema}.a (x serial, y text); create table ${schema}.b (x int)`);
      await admin.query(`drop schema ${schema} cascade`);
    }
    await admin.end();
  })();
  return {
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.skipIf(!reachable)('the PostgreSQL dialect', () => {
  it('introspects only the current schema, so schemas dropped meanwhile fail nothing, even scanned in parallel', async () => {
    const { database } = await postgresSchemaDatabase(PARALLEL_ALWAYS);
    const churn = churnSchemas();
    try {
      // Kysely's own introspector names every schema and fails with 3F000 on one dropped meanwhile.
      await migrateToLatest(database);
      expect((await sql<{ min_parallel_table_scan_size: string }>`show min_parallel_table_scan_size`.execute(database.db)).rows).toEqual([{ min_parallel_table_scan_size: '0' }]);
      const until = Date.now() + 1000;
      while (Date.now() < until) {
        const tables = await database.db.introspection.getTables();
        expect(tables.map((t) => t.name).sort()).toEqual(SLUICE_TABLES);
      }
      const [current] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows;
      const withMigrations = await database.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(withMigrations.map((t) => t.name).sort()).toEqual([...SLUICE_TABLES, 'kysely_migration', 'kysely_migration_lock'].sort());
      expect(new Set(withMigrations.map((t) => t.schema))).toEqual(new Set([current!.schema]));
      const projects = withMigrations.find((t) => t.name === 'projects')!;
      expect(projects.columns.map((c) => [c.name, c.isNullable])).toEqual([['id', false], ['name', false], ['balance_micros', false], ['created_at', false], ['deleted_at', true]]);
    } finally {
      await churn.stop();
      await database.close();
    }
  });

  it('commits usage without waiting for the WAL flush only when configured, and every other write with it', async () => {
    const { url, drop } = await postgresSchema();
    const durable = openDatabase({ kind: 'postgres', url, usageSynchronousCommit: true, preparedStatements: true });
    const relaxed = openDatabase({ kind: 'postgres', url, usageSynchronousCommit: false, preparedStatements: true });
    try {
      expect(durable.usageDb).toBe(durable.db);
      expect(await synchronousCommit(durable.db)).toBe('on');
      expect(await synchronousCommit(relaxed.db)).toBe('on');
      expect(await synchronousCommit(relaxed.usageDb)).toBe('off');

      await migrateToLatest(relaxed);
      const projects = new ProjectsRepository(relaxed);
      const usage = new UsageRepository(relaxed);
      const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 100, createdAtMs: Date.now() });
      const balances = await usage.recordAndDebitMany([usageRecord(project.id, { costMicros: 30 }), usageRecord(project.id, { costMicros: 12 })]);
      expect(balances).toEqual(new Map([[project.id, 58]]));
      // Visible at once to the other connections (and replicas): only the flush is deferred.
      expect(await new ProjectsRepository(durable).balanceOf(project.id)).toBe(58);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from usage_records where project_id = ${project.id}`.execute(durable.db);
      expect(rows[0]!.n).toBe(2);
    } finally {
      await durable.close();
      await relaxed.close();
      await drop();
    }
  });

  it('a server with asynchronous usage commits serves a burst exactly as far as the credit goes', async () => {
    const { url, drop } = await postgresSchema();
    const server = await startTestServer({
      env: { DATABASE_URL: url, DATABASE_USAGE_SYNCHRONOUS_COMMIT: 'false', RATE_LIMIT_RPM: '10000' },
      extendApp: registerProbeRoutes,
    });
    try {
      expect(server.core.database.usageDb).not.toBe(server.core.database.db);
      const tenant = await server.newTenant({ balanceUsd: 20 / 1_000_000 }); // 20 calls of 1 µ$
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => call(server.baseUrl, 'POST', `${PROBE}/spend`, { key: tenant.key, body: { cost_micros: 1, delay_ms: 20 } })),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(80);
      expect((await server.core.projects.getProject(tenant.projectId)).balanceMicros).toBe(0);
      expect((await server.core.projects.listUsage(tenant.projectId, 500)).items).toHaveLength(20);
    } finally {
      await server.close();
      await drop();
    }
  });
});

/**
 * Prepared statements on the real server (storage/db/prepared-statements.ts): a connection
 * prepares what it repeats, answers stay the same, and a plan a migration made stale is
 * run again unnamed instead of failing the caller.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { onePostgresConnection, postgresReachable, postgresSchema, type LooseDb } from '../../helpers/databases.js';
import { postgresDialect } from '../../../src/storage/db/postgres-dialect.js';
import { postgresPool } from '../../../src/storage/db/prepared-statements.js';
import { databaseFromDialect, type Tables } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { usageRecord } from '../../helpers/usage-records.js';

const reachable = await postgresReachable();

/** One connection (so every query sees the same session's prepared statements) on a fresh schema. */
async function oneConnection(preparedStatements: boolean): Promise<LooseDb> {
  const { db, close } = await onePostgresConnection(preparedStatements);
  onTestFinished(close);
  return db;
}

const prepared = async (db: LooseDb) =>
  (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db)).rows;

const byId = (db: LooseDb, id: number) => db.selectFrom('t').selectAll().where('id', '=', id).execute();

/** A connection whose `select *` on t (one row) was prepared, then `change` ran on it. */
async function preparedSelectThen(change: RawBuilder<unknown>): Promise<LooseDb> {
  const db = await oneConnection(true);
  await sql`create table t (id int primary key, label text)`.execute(db);
  await sql`insert into t values (1, 'one')`.execute(db);
  await byId(db, 1);
  await byId(db, 1);
  expect(await prepared(db)).toHaveLength(1);
  await change.execute(db);
  return db;
}

/** The plan goes stale: t gains a column (as another replica's migration would add it). */
const staleSelect = () => preparedSelectThen(sql`alter table t add column weight int default 5`);
/** The session loses its prepared statements, as under a pooler that resets server connections. */
const lostSelect = () => preparedSelectThen(sql`deallocate all`);

describe.skipIf(!reachable)('prepared statements on PostgreSQL', () => {
  it('prepares a statement on its second run, once per connection, with the same answers', async () => {
    const db = await oneConnection(true);
    await sql`create table t (id int primary key, label text)`.execute(db);
    await sql`insert into t values (1, 'one'), (2, 'two')`.execute(db);

    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one' }]);
    expect(await prepared(db)).toEqual([]);
    expect(await byId(db, 2)).toEqual([{ id: 2, label: 'two' }]);
    expect(await prepared(db)).toEqual([{ name: 'sluice_1', statement: 'select * from "t" where "id" = $1' }]);
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one' }]);
    expect(await byId(db, 3)).toEqual([]);
    expect(await prepared(db)).toHaveLength(1);
  });

  it('prepares nothing when turned off', async () => {
    const db = await oneConnection(false);
    await sql`create table t (id int primary key, label text)`.execute(db);
    for (let i = 0; i < 3; i++) expect(await byId(db, 1)).toEqual([]);
    expect(await prepared(db)).toEqual([]);
  });

  it('runs a plan a migration made stale again unnamed, outside a transaction: the caller sees the new columns', async () => {
    const db = await staleSelect();
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one', weight: 5 }]);
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one', weight: 5 }]);
  });

  it('inside a transaction a stale plan fails the transaction with PostgreSQL\'s error, and the next one runs unnamed', async () => {
    const db = await staleSelect();
    await expect(db.transaction().execute((tx) => tx.selectFrom('t').selectAll().where('id', '=', 1).execute())).rejects.toMatchObject({
      code: '0A000',
      message: 'cached plan must not change result type',
    });
    expect(await db.transaction().execute((tx) => tx.selectFrom('t').selectAll().where('id', '=', 1).execute())).toEqual([{ id: 1, label: 'one', weight: 5 }]);
  });

  it('a statement the server no longer holds (a pooler reset the session) runs again unnamed, and nothing is named after it', async () => {
    const db = await lostSelect();
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one' }]);
    const other = (id: number) => db.selectFrom('t').select('label').where('id', '=', id).execute();
    for (let i = 0; i < 3; i++) expect(await other(1)).toEqual([{ label: 'one' }]);
    expect(await byId(db, 1)).toEqual([{ id: 1, label: 'one' }]);
    expect(await prepared(db)).toEqual([]);
  });

  it('inside a transaction a statement the server lost fails the transaction with its error, and the next one runs unnamed', async () => {
    const db = await lostSelect();
    await expect(db.transaction().execute((tx) => tx.selectFrom('t').selectAll().where('id', '=', 1).execute())).rejects.toMatchObject({
      code: '26000',
      message: 'prepared statement "sluice_1" does not exist',
    });
    expect(await db.transaction().execute((tx) => tx.selectFrom('t').selectAll().where('id', '=', 1).execute())).toEqual([{ id: 1, label: 'one' }]);
    expect(await prepared(db)).toEqual([]);
  });

  it('group commits of usage run prepared and debit exactly what they record', async () => {
    const { url, drop } = await postgresSchema();
    const database = databaseFromDialect(postgresDialect(postgresPool(url, { max: 1, preparedStatements: true })), 'postgres', { afterClose: drop });
    onTestFinished(() => database.close());
    await migrateToLatest(database);
    const project = await new ProjectsRepository(database).insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: Date.now() });
    const usage = new UsageRepository(database);
    const balances: number[] = [];
    for (let i = 0; i < 3; i++) {
      const after = await usage.recordAndDebitMany([usageRecord(project.id, { costMicros: 30 }), usageRecord(project.id, { costMicros: 12 })]);
      balances.push(after!.get(project.id)!);
    }
    expect(balances).toEqual([958, 916, 874]);
    const statements = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(database.db as Kysely<Tables>)).rows.map((r) => r.statement);
    expect(statements.filter((s) => s.startsWith('with s0 as (insert into "usage_records"'))).toHaveLength(1);
    const { rows } = await sql<{ n: number; cost: number }>`select count(*)::int as n, sum(cost_micros)::int as cost from usage_records`.execute(database.db);
    expect(rows[0]).toEqual({ n: 6, cost: 126 });
  });
});

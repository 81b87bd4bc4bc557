/** SQLite internals on files: migration 0004 up/down, the synchronous fast path vs open transactions, the WAL checkpointer, clean close. */
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CompiledQuery, sql } from 'kysely';
import { tempDir } from '../../helpers/databases.js';
import { openDatabase, type Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { SqliteCheckpointer, type CheckpointReport } from '../../../src/storage/db/sqlite-checkpointer.js';
import { sqliteDriver } from '../../../src/storage/db/sqlite-driver.js';

const SQLite = sqliteDriver().Database;
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { usageRecord } from '../../helpers/usage-records.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';

const dirs: string[] = [];
const freshFile = () => {
  const dir = tempDir('sluice-sqlite-');
  dirs.push(dir);
  return path.join(dir, 'sluice.db');
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}


/** A usage record as the columns of migrations 0001–0005. */
const usageColumns = (r: UsageRecord) => ({
  id: r.id, project_id: r.projectId, key_id: r.keyId, model: r.model, route: r.route, input_tokens: r.inputTokens,
  output_tokens: r.outputTokens, cost_micros: r.costMicros, request_id: r.requestId, status: r.status, created_at: r.createdAtMs,
});
async function insertUsageRow(database: Database, record: UsageRecord): Promise<void> {
  const row = usageColumns(record);
  const columns = sql.join(Object.keys(row).map((c) => sql.ref(c)));
  await sql`insert into usage_records (${columns}) values (${sql.join(Object.values(row))})`.execute(database.db);
}
async function usageRows(database: Database, projectId: string): Promise<ReturnType<typeof usageColumns>[]> {
  const { rows } = await sql<ReturnType<typeof usageColumns>>`select id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at
    from usage_records where project_id = ${projectId} order by id desc`.execute(database.db);
  return rows;
}

async function tableSql(database: Database): Promise<string> {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'usage_records'`.execute(database.db);
  return rows[0]!.sql;
}
async function hasProjectIndex(database: Database): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name = 'usage_project_id_idx'`.execute(database.db);
  return rows.length === 1;
}
async function hasRowid(database: Database): Promise<boolean> {
  return sql`select rowid from usage_records limit 1`.execute(database.db).then(
    () => true,
    () => false,
  );
}

describe('migration 0004-usage-clustered on a SQLite file', () => {
  it('rebuilds usage_records WITHOUT ROWID keyed (project_id, id), keeps every row, and reverts cleanly', async () => {
    const database = openDatabase({ kind: 'sqlite', path: freshFile() });
    try {
      const migrator = await migratorFor(database);
      const to3 = await migrator.migrateTo('0003-batch-retention');
      expect(to3.error).toBeUndefined();
      expect(await hasProjectIndex(database)).toBe(true);
      expect(await hasRowid(database)).toBe(true);

      const projects = new ProjectsRepository(database);
      const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: 1_700_000_000_000 });
      const other = await projects.insert({ id: newUuid(), name: 'o', balanceMicros: 0, createdAtMs: 1_700_000_000_000 });
      const written = [1, 2, 3].map((n) =>
        usageRecord(project.id, { id: `usage_0${n}`, keyId: n === 2 ? 'key_a' : null, inputTokens: n, outputTokens: 2 ** 40 + n, costMicros: 10 * n, createdAtMs: 1_700_000_000_000 + n }),
      );
      // Rows as the tables of 0003/0004 hold them (the repository writes the latest schema's columns).
      for (const record of written) await insertUsageRow(database, record);
      await insertUsageRow(database, usageRecord(other.id, { id: 'usage_00' }));
      const newestFirst = [...written].reverse().map(usageColumns);
      const expectRowsIntact = async () => {
        expect(await usageRows(database, project.id)).toEqual(newestFirst);
        expect((await usageRows(database, other.id)).map((r) => r.id)).toEqual(['usage_00']);
      };
      await expectRowsIntact();

      // To 0004 itself: later migrations are not this test's subject.
      const up = await migrator.migrateTo('0004-usage-clustered');
      expect(up.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['0004-usage-clustered', 'Up', 'Success']]);
      await expectRowsIntact();
      expect(await tableSql(database)).toMatch(/without\s+rowid/i);
      expect(await hasRowid(database)).toBe(false);
      expect(await hasProjectIndex(database)).toBe(false);
      const { rows: columns } = await sql<{ name: string; pk: number }>`pragma table_info(usage_records)`.execute(database.db);
      expect(columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)).toEqual(['project_id', 'id']);

      const down = await migrator.migrateDown();
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['0004-usage-clustered', 'Down', 'Success']]);
      await expectRowsIntact();
      expect(await tableSql(database)).not.toMatch(/without\s+rowid/i);
      expect(await hasRowid(database)).toBe(true);
      expect(await hasProjectIndex(database)).toBe(true);
      await expect(insertUsageRow(database, { ...written[0]! })).rejects.toThrow(); // id is the primary key again

      const again = await migrator.migrateTo('0004-usage-clustered');
      expect(again.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['0004-usage-clustered', 'Up', 'Success']]);
      await expectRowsIntact();
      expect(await tableSql(database)).toMatch(/without\s+rowid/i);
    } finally {
      await database.close();
    }
  });
});

describe('synchronous fast path on a SQLite file', () => {
  const setup = async () => {
    const database = openDatabase({ kind: 'sqlite', path: freshFile() });
    await migrateToLatest(database);
    const projects = new ProjectsRepository(database);
    const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: Date.now() });
    return { database, projects, usage: new UsageRepository(database), project };
  };

  it('commits usage at once when idle, and never inside another caller’s transaction that rolls back', async () => {
    const { database, projects, usage, project } = await setup();
    try {
      expect(database.sync!.idle).toBe(true);
      const early = usageRecord(project.id, { costMicros: 1 });
      const earlyDone = usage.recordAndDebitMany([early]);
      // Idle: written synchronously, before the promise is awaited.
      const visible = database.sync!.all<{ id: string }>(CompiledQuery.raw('select id from usage_records where id = ?', [early.id]));
      expect(visible).toEqual([{ id: early.id }]);
      await earlyDone;

      const record = usageRecord(project.id, { costMicros: 40 });
      let idleInside: boolean | undefined;
      let pending: Promise<unknown> | undefined;
      await expect(
        database.db.transaction().execute(async (trx) => {
          await trx.updateTable('projects').set({ balance_micros: sql`balance_micros + 500` }).where('id', '=', project.id).execute();
          idleInside = database.sync!.idle;
          pending = usage.recordAndDebitMany([record]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(idleInside).toBe(false);
      await pending;
      expect(database.sync!.idle).toBe(true);
      expect((await usage.listByProject(project.id, 10)).items.map((r) => r.id)).toEqual([record.id, early.id]);
      expect(await projects.balanceOf(project.id)).toBe(1_000 - 1 - 40);
    } finally {
      await database.close();
    }
  });

  it('balancesOf returns the committed balance when idle and while a transaction is open elsewhere', async () => {
    const { database, projects, project } = await setup();
    try {
      expect(await projects.balancesOf([project.id, 'missing'])).toEqual(new Map([[project.id, 1_000]]));
      let during: Promise<Map<string, number>> | undefined;
      await expect(
        database.db.transaction().execute(async (trx) => {
          await trx.updateTable('projects').set({ balance_micros: 5 }).where('id', '=', project.id).execute();
          during = projects.balancesOf([project.id]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      // A read on the shared connection inside the transaction would have seen the uncommitted 5.
      expect(await during).toEqual(new Map([[project.id, 1_000]]));
      await projects.adjustBalance(project.id, -250);
      expect(await projects.balancesOf([project.id])).toEqual(new Map([[project.id, 750]]));
    } finally {
      await database.close();
    }
  });
});

describe('WAL checkpoints and close on SQLite files', () => {
  it('openDatabase keeps automatic checkpoints on its main connection only as a 10,000-frame backstop', async () => {
    const database = openDatabase({ kind: 'sqlite', path: freshFile() });
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
      expect(rows).toEqual([{ wal_autocheckpoint: 10_000 }]);
    } finally {
      await database.close();
    }
  });

  it('the checkpointer thread moves every WAL frame into the database file and closes promptly, twice', async () => {
    const file = freshFile();
    const connection = new SQLite(file);
    try {
      expect(connection.pragma('journal_mode = WAL', { simple: true })).toBe('wal');
      connection.exec('create table t (id integer primary key, payload blob not null)');
      const reports: CheckpointReport[] = [];
      const checkpointer = new SqliteCheckpointer(connection, file, 50, (report) => reports.push(report));
      expect(connection.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);

      const insert = connection.prepare('insert into t (payload) values (?)');
      connection.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run(Buffer.alloc(2_000, i % 256));
      })();
      // ~1 MB written: below the backstop it all sits in the WAL until the thread runs.
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(900_000);
      await waitFor(() => reports.some((r) => r.walFrames >= 200 && r.checkpointedFrames === r.walFrames));
      expect(statSync(file).size).toBeGreaterThan(900_000);
      expect(connection.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);

      const started = Date.now();
      await checkpointer.close();
      expect(Date.now() - started).toBeLessThan(1_500); // the thread exits on request, not via the 2 s fallback
      await expect(checkpointer.close()).resolves.toBeUndefined();
      expect(connection.prepare('select count(*) as n from t').get()).toEqual({ n: 500 });
    } finally {
      connection.close();
    }
  });

  it('closing a file database leaves no WAL content behind and keeps the data', async () => {
    const file = freshFile();
    const database = openDatabase({ kind: 'sqlite', path: file });
    await migrateToLatest(database);
    const projects = new ProjectsRepository(database);
    const usage = new UsageRepository(database);
    const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: Date.now() });
    for (let i = 0; i < 20; i++) await usage.recordAndDebitMany([usageRecord(project.id, { costMicros: 5 })]);
    expect(existsSync(`${file}-wal`)).toBe(true);
    await database.close();
    expect(!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size === 0).toBe(true);

    const reopened = new SQLite(file, { readonly: true });
    try {
      expect(reopened.prepare('select balance_micros as b from projects where id = ?').get(project.id)).toEqual({ b: 900 });
      expect(reopened.prepare('select count(*) as n from usage_records').get()).toEqual({ n: 20 });
    } finally {
      reopened.close();
    }
  });
});

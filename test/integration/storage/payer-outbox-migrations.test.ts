/**
 * Migrations 0006 (the payer on usage records and batches) and 0007 (the settlement
 * outbox) on SQLite and PostgreSQL: rows written before 0006 become `project` payers,
 * the repositories read them so, and both migrations revert cleanly.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { BatchesRepository } from '../../../src/storage/db/repositories/batches.repository.js';
import { OutboxRepository } from '../../../src/storage/db/repositories/outbox.repository.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = 1_700_000_000_000;

/** Rows as the tables of 0005 hold them: no payer columns. */
async function seedBefore0006(database: Database) {
  const projectId = newUuid();
  const batchId = newId('batch_');
  const usageId = newId('usage_');
  await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 500, created_at: NOW }).execute();
  await sql`insert into batches (id, project_id, created_by_key_id, endpoint, input_file_id, input_blob_key, completion_window, status, metadata,
      total_lines, completed_lines, failed_lines, shards_total, created_at, expires_at)
    values (${batchId}, ${projectId}, ${'key_old'}, ${'/v1/chat/completions'}, ${'file-x'}, ${'files/x.jsonl'}, ${'24h'}, ${'in_progress'}, ${'{}'},
      ${1}, ${0}, ${0}, ${1}, ${NOW}, ${NOW + 1})`.execute(database.db);
  await sql`insert into usage_records (id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at)
    values (${usageId}, ${projectId}, ${'key_old'}, ${'m'}, ${'r'}, ${1}, ${2}, ${3}, ${'req_old'}, ${200}, ${NOW})`.execute(database.db);
  return { projectId, batchId, usageId };
}

const columnMissing = (database: Database, query: ReturnType<typeof sql>) => expect(query.execute(database.db)).rejects.toThrow();

describe.each(cases)('migrations 0006 and 0007 on $name', ({ open }) => {
  it('existing usage records and batches become project payers; the outbox table appears; both revert', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0005-batch-trace-parent')).error).toBeUndefined();
      const { projectId, batchId, usageId } = await seedBefore0006(database);

      // Up to 0007 itself: later migrations follow it.
      const up = await migrator.migrateTo('0007-outbox');
      expect(up.results?.map((r) => r.migrationName)).toEqual(['0006-payer', '0007-outbox']);
      const stored = (table: 'usage_records' | 'batches', id: string) =>
        database.db.selectFrom(table).select(['payer_kind', 'payer_id']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(await stored('usage_records', usageId)).toEqual({ payer_kind: 'project', payer_id: projectId });
      expect(await stored('batches', batchId)).toEqual({ payer_kind: 'project', payer_id: projectId });
      const usage = await new UsageRepository(database).listByProject(projectId, 10);
      expect(usage.items.map((r) => [r.id, r.payer])).toEqual([[usageId, { kind: 'project', id: projectId }]]);
      expect((await new BatchesRepository(database).runInfo(batchId))?.payer).toEqual({ kind: 'project', id: projectId });
      expect(await new OutboxRepository(database).listDead(10)).toEqual({ items: [], hasMore: false });

      // Down through 0006: the columns and the table are gone, the rows stay.
      const down = await migrator.migrateTo('0005-batch-trace-parent');
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0007-outbox', 'Down', 'Success'],
        ['0006-payer', 'Down', 'Success'],
      ]);
      // Asked of this database's own tables (introspection would list every schema's on a shared server).
      await columnMissing(database, sql`select payer_kind from usage_records`);
      await columnMissing(database, sql`select payer_id from batches`);
      await columnMissing(database, sql`select id from outbox`);
      const { rows } = await sql<{ id: string; cost_micros: number }>`select id, cost_micros from usage_records`.execute(database.db);
      expect(rows.map((r) => [r.id, Number(r.cost_micros)])).toEqual([[usageId, 3]]);

      // And up again.
      expect((await migrator.migrateTo('0007-outbox')).results?.map((r) => r.migrationName)).toEqual(['0006-payer', '0007-outbox']);
      expect(await stored('usage_records', usageId)).toEqual({ payer_kind: 'project', payer_id: projectId });
    } finally {
      await database.close();
    }
  });

  it('a row written without payer columns (a replica of the previous release) reads as paid by its project', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 0, created_at: NOW }).execute();
      const usageId = newId('usage_');
      await sql`insert into usage_records (id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at)
        values (${usageId}, ${projectId}, ${null}, ${'m'}, ${'r'}, ${1}, ${2}, ${3}, ${'req_rolling'}, ${200}, ${NOW})`.execute(database.db);
      const [record] = (await new UsageRepository(database).listByProject(projectId, 1)).items;
      expect(record?.payer).toEqual({ kind: 'project', id: projectId });
    } finally {
      await database.close();
    }
  });
});

describe.each(cases)('migration 0010 on $name', ({ open }) => {
  it('drops the unique index on outbox keys (a repeated key is two entries) and restores it going down', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0009-console')).error).toBeUndefined();
      const row = (id: string) => ({
        id, target_kind: 'intermediary', idempotency_key: 'gwreq_same', payload: '{}', state: 'pending',
        attempts: 0, next_attempt_at: NOW, lease_owner: null, lease_expires_at: null, last_error: null, created_at: NOW, delivered_at: null,
      });
      await database.db.insertInto('outbox').values(row('outbox_a')).execute();
      await expect(database.db.insertInto('outbox').values(row('outbox_b')).execute()).rejects.toThrow();

      expect((await migrator.migrateTo('0010-outbox-keys')).error).toBeUndefined();
      await database.db.insertInto('outbox').values(row('outbox_b')).execute();
      const keys = await database.db.selectFrom('outbox').select('id').where('idempotency_key', '=', 'gwreq_same').orderBy('id').execute();
      expect(keys.map((k) => k.id)).toEqual(['outbox_a', 'outbox_b']);

      await database.db.deleteFrom('outbox').where('id', '=', 'outbox_b').execute();
      const down = await migrator.migrateTo('0009-console');
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['0010-outbox-keys', 'Down', 'Success']]);
      await expect(database.db.insertInto('outbox').values(row('outbox_c')).execute()).rejects.toThrow();
      await migrateToLatest(database);
    } finally {
      await database.close();
    }
  });
});

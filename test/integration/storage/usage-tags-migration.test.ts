/**
 * Migration 0018 and the spend report's storage on SQLite and PostgreSQL: records keep
 * their tags and end user (none for rows from before), a tag row per record and tag; the
 * report's rows stream a page at a time across pages, and a reader that stops early frees
 * the cursor or temporary table (the database serves the next report); the migration reverts.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from '../../../src/storage/db/repositories/usage-reports.repository.js';
import { usageRecord } from '../../helpers/usage-records.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import type { SpendRow } from '../../../src/domain/billing/usage-reports.port.js';

const cases = await dialectCases();
const NOW = 1_700_000_000_000;

describe.each(cases)('migration 0018 and the spend report on $name', ({ open }) => {
  it('keeps tags and end users (none for older rows), a tag row per record and tag; reverts', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0015-usage-cached-tokens')).error).toBeUndefined();
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 500, created_at: NOW }).execute();
      await sql`insert into usage_records (id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at)
        values (${'usage_old'}, ${projectId}, ${null}, ${'m'}, ${'r'}, ${1}, ${2}, ${3}, ${'req_old'}, ${200}, ${NOW})`.execute(database.db);
      await migrateToLatest(database);
      const usage = new UsageRepository(database);
      await usage.recordAndDebitMany([
        usageRecord(projectId, { requestId: 'req_tagged', createdAtMs: NOW + 1, tags: ['team-a', 'prod'], endUser: 'alice', costMicros: 11 }),
        usageRecord(projectId, { requestId: 'req_plain', createdAtMs: NOW + 2 }),
      ]);
      const labels = (await usage.listByProject(projectId, 10)).items.map((r) => [r.requestId, r.tags ?? null, r.endUser ?? null]);
      expect(labels.sort()).toEqual([
        ['req_old', null, null],
        ['req_plain', null, null],
        ['req_tagged', ['team-a', 'prod'], 'alice'],
      ]);
      const tagRows = await database.db.selectFrom('usage_tags').select(['tag', 'cost_micros', 'created_at']).orderBy('tag').execute();
      expect(tagRows.map((r) => [r.tag, Number(r.cost_micros), Number(r.created_at)])).toEqual([
        ['prod', 11, NOW + 1],
        ['team-a', 11, NOW + 1],
      ]);

      expect((await migrator.migrateTo('0015-usage-cached-tokens')).error).toBeUndefined();
      const columns = (await database.db.introspection.getTables()).find((t) => t.name === 'usage_records')!.columns.map((c) => c.name);
      expect(columns).not.toContain('tags');
      expect(columns).not.toContain('end_user');
      expect((await database.db.introspection.getTables()).map((t) => t.name)).not.toContain('usage_tags');
    } finally {
      await database.close();
    }
  });

  it('streams a report of 2,500 groups across pages, in order, and frees what it held when the reader stops', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 0, created_at: NOW }).execute();
      const usage = new UsageRepository(database);
      const users = Array.from({ length: 2_500 }, (_, i) => `user-${String(i).padStart(4, '0')}`);
      for (let i = 0; i < users.length; i += 250) {
        await usage.recordAndDebitMany(users.slice(i, i + 250).map((endUser, j) => usageRecord(projectId, { endUser, createdAtMs: NOW + i + j, costMicros: i + j })));
      }
      const reports = new UsageReportsRepository(database);
      const query = { projectId, sinceMs: NOW, untilMs: NOW + 86_400_000, groupBy: 'end_user' as const };
      const rows: SpendRow[] = [];
      for await (const row of reports.spend(query)) rows.push(row);
      expect(rows.map((r) => r.group)).toEqual(users);
      expect(rows.map((r) => r.costMicros)).toEqual(users.map((_, i) => i));
      expect(rows.every((r) => r.requests === 1 && r.inputTokens === 10 && r.outputTokens === 5)).toBe(true);

      // More early stops than the pool has connections: a cursor's transaction left open would hang the next.
      for (let round = 0; round < 12; round++) {
        let seen = 0;
        for await (const _row of reports.spend(query)) if (++seen === 1_200) break;
        expect(seen).toBe(1_200);
      }
      if (database.flavor === 'sqlite') {
        const { rows: temporary } = await sql<{ name: string }>`select name from temp.sqlite_master where type = 'table'`.execute(database.db);
        expect(temporary).toEqual([]);
      }
      const byDay = [];
      for await (const row of reports.spend({ ...query, groupBy: 'day' })) byDay.push(row);
      expect(byDay).toEqual([{ group: '2023-11-14', requests: 2_500, inputTokens: 25_000, outputTokens: 12_500, cachedInputTokens: 0, cacheWriteTokens: 0, costMicros: 3_123_750 }]);
    } finally {
      await database.close();
    }
  });
});

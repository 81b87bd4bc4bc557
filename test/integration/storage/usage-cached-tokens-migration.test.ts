/**
 * Migration 0015 on SQLite and PostgreSQL: usage records keep cached input tokens and
 * cache writes apart; a record written before reads none, a new one keeps both, the usage
 * report sums them, and the migration reverts.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from '../../../src/storage/db/repositories/usage-reports.repository.js';
import { usageRecord } from '../../helpers/usage-records.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = 1_700_000_000_000;

describe.each(cases)('migration 0015 on $name', ({ open }) => {
  it('keeps cached input and cache writes apart: none for older rows, kept and summed for new ones; reverts', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0014-usage-session')).error).toBeUndefined();
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 5_000, created_at: NOW }).execute();
      await sql`insert into usage_records (id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at)
        values (${newId('usage_')}, ${projectId}, ${null}, ${'m'}, ${'r'}, ${100}, ${2}, ${3}, ${'req_old'}, ${200}, ${NOW})`.execute(database.db);

      expect((await migrator.migrateTo('0015-usage-cached-tokens')).error).toBeUndefined();
      // The repository writes every column of today's table (later migrations add more).
      await migrateToLatest(database);
      const usage = new UsageRepository(database);
      await usage.recordAndDebit(usageRecord(projectId, { requestId: 'req_new', inputTokens: 1000, cachedInputTokens: 800, cacheWriteTokens: 150, createdAtMs: NOW + 1 }));
      const { items } = await usage.listByProject(projectId, 10);
      expect(items.map((r) => [r.requestId, r.inputTokens, r.cachedInputTokens ?? 0, r.cacheWriteTokens ?? 0])).toEqual([
        ['req_new', 1000, 800, 150],
        ['req_old', 100, 0, 0],
      ]);
      const [bucket] = await new UsageReportsRepository(database).aggregate({ projectId, startMs: NOW, endMs: NOW + 60_000, bucketMs: 60_000, groupBy: null });
      expect(bucket).toMatchObject({ requests: 2, inputTokens: 1100, cachedInputTokens: 800, cacheWriteTokens: 150 });

      const down = await migrator.migrateTo('0014-usage-session');
      // Later migrations revert first; 0015 last.
      expect(down.results?.every((r) => r.direction === 'Down' && r.status === 'Success')).toBe(true);
      expect(down.results?.at(-1)?.migrationName).toBe('0015-usage-cached-tokens');
      await expect(sql`select cached_input_tokens from usage_records`.execute(database.db)).rejects.toThrow();
      await migrateToLatest(database);
    } finally {
      await database.close();
    }
  });
});

/**
 * Migration 0014 on SQLite and PostgreSQL: usage records gain the coding agent's session
 * (X-Claude-Code-Session-Id); a record written before reads as none, a new one keeps its
 * session, and the migration reverts.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = 1_700_000_000_000;
const SESSION = '5f0c2b7e-9a1d-4c3b-8e2f-1a2b3c4d5e6f';

describe.each(cases)('migration 0014 on $name', ({ open }) => {
  it('adds the agent session to usage records: none for older rows, kept for new ones; reverts', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0013-responses')).error).toBeUndefined();
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 500, created_at: NOW }).execute();
      const oldId = newId('usage_');
      await sql`insert into usage_records (id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at)
        values (${oldId}, ${projectId}, ${null}, ${'m'}, ${'r'}, ${1}, ${2}, ${3}, ${'req_old'}, ${200}, ${NOW})`.execute(database.db);

      expect((await migrator.migrateTo('0014-usage-session')).error).toBeUndefined();
      // The repository writes every column of today's table (later migrations add more).
      await migrateToLatest(database);
      const usage = new UsageRepository(database);
      const record = (requestId: string, at: number, sessionId?: string): UsageRecord => ({
        id: newId('usage_'), projectId, keyId: null, payer: { kind: 'project', id: projectId }, model: 'my-llm', route: '/v1/chat/completions',
        inputTokens: 1, outputTokens: 1, costMicros: 0, requestId, status: 200, createdAtMs: at, ...(sessionId ? { sessionId } : {}),
      });
      await usage.recordAndDebit(record('req_none', NOW + 1));
      await usage.recordAndDebit(record('req_new', NOW + 2, SESSION));
      const { items } = await usage.listByProject(projectId, 10);
      expect(items.map((r) => [r.requestId, r.sessionId ?? null])).toEqual([
        ['req_new', SESSION],
        ['req_none', null],
        ['req_old', null],
      ]);
      expect('sessionId' in items[1]!).toBe(false);

      const down = await migrator.migrateTo('0013-responses');
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status]).at(-1)).toEqual(['0014-usage-session', 'Down', 'Success']);
      await expect(sql`select session_id from usage_records`.execute(database.db)).rejects.toThrow();
      await migrateToLatest(database);
    } finally {
      await database.close();
    }
  });
});

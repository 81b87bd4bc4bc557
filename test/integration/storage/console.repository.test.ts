/** Console sessions and the usage report's aggregation, on SQLite and PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectCases } from '../../helpers/databases.js';
import { usageRecord } from '../../helpers/usage-records.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { ConsoleSessionsRepository } from '../../../src/storage/db/repositories/console-sessions.repository.js';
import { UsageReportsRepository } from '../../../src/storage/db/repositories/usage-reports.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from '../../../src/storage/db/repositories/api-keys.repository.js';
import { CreditGrantsRepository } from '../../../src/storage/db/repositories/credit-grants.repository.js';
import type { UsageBucketRow } from '../../../src/domain/billing/usage-reports.port.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

describe.each(cases)('console storage on $name', ({ open }) => {
  let database: Database;
  let sessions: ConsoleSessionsRepository;
  let reports: UsageReportsRepository;
  const projectA = newUuid();
  const projectB = newUuid();
  const keyA = newId('key_');

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    sessions = new ConsoleSessionsRepository(database);
    reports = new UsageReportsRepository(database);
    const projects = new ProjectsRepository(database);
    for (const id of [projectA, projectB]) await projects.insert({ id, name: id, balanceMicros: 1_000_000, createdAtMs: T0 });
    await new ApiKeysRepository(database).insert({ id: keyA, projectId: projectA, name: 'k', prefix: 'sk-sluice-abc', keyHash: 'a'.repeat(64), createdAtMs: T0, revokedAtMs: null, policy: null, previousKeyHash: null, previousValidUntilMs: null });
    const usage = new UsageRepository(database);
    await usage.recordAndDebitMany([
      usageRecord(projectA, { keyId: keyA, model: 'chat', createdAtMs: T0, inputTokens: 10, outputTokens: 5, costMicros: 7 }),
      usageRecord(projectA, { keyId: keyA, model: 'chat', createdAtMs: T0 + HOUR - 1, inputTokens: 1, outputTokens: 2, costMicros: 3 }),
      usageRecord(projectA, { keyId: null, model: 'embed', createdAtMs: T0 + HOUR, inputTokens: 100, outputTokens: 0, costMicros: 1 }),
      usageRecord(projectB, { keyId: null, model: 'chat', createdAtMs: T0 + 2 * HOUR + 5, inputTokens: 4, outputTokens: 4, costMicros: 2 }),
      usageRecord(projectA, { keyId: keyA, model: 'chat', createdAtMs: T0 + 3 * HOUR, inputTokens: 9, outputTokens: 9, costMicros: 9 }),
    ]);
  });
  afterAll(async () => database?.close());

  describe('sessions', () => {
    it('finds a live session by its hash; not once expired, deleted, or its key revoked', async () => {
      const dev = { role: 'developer' as const, projectId: projectA, keyId: keyA, userId: null, expiresAtMs: T0 + HOUR };
      await sessions.insert('h-dev', dev, T0);
      await sessions.insert('h-op', { role: 'operator', projectId: null, keyId: null, userId: null, expiresAtMs: T0 + HOUR }, T0);
      expect(await sessions.findLive('h-dev', T0 + HOUR - 1)).toEqual(dev);
      expect(await sessions.findLive('h-dev', T0 + HOUR)).toBeUndefined();
      expect(await sessions.findLive('h-op', T0)).toEqual({ role: 'operator', projectId: null, keyId: null, userId: null, expiresAtMs: T0 + HOUR });
      expect(await sessions.findLive('h-unknown', T0)).toBeUndefined();

      await new ApiKeysRepository(database).revoke(keyA, T0 + 1);
      expect(await sessions.findLive('h-dev', T0 + 2)).toBeUndefined();
      expect(await sessions.findLive('h-op', T0 + 2)).toBeDefined();

      await sessions.delete('h-op');
      expect(await sessions.findLive('h-op', T0)).toBeUndefined();
      await sessions.insert('h-old', { role: 'operator', projectId: null, keyId: null, userId: null, expiresAtMs: T0 + 10 }, T0);
      await sessions.deleteExpired(T0 + 10);
      const left = await database.db.selectFrom('console_sessions').select('id_hash').execute();
      expect(left.map((r) => r.id_hash)).toEqual(['h-dev']);
    });
  });

  describe('credit grants', () => {
    it('applies a grant to the balance with its record, newest first; nothing for an unknown project', async () => {
      const grants = new CreditGrantsRepository(database);
      const first = { id: newId('grant_'), projectId: projectB, amountMicros: 500, reason: 'pilot', createdAtMs: T0 };
      const second = { id: newId('grant_'), projectId: projectB, amountMicros: -200, reason: null, createdAtMs: T0 + 1 };
      const before = (await new ProjectsRepository(database).findById(projectB))!.balanceMicros;
      expect((await grants.grant(first))?.balanceMicros).toBe(before + 500);
      expect((await grants.grant(second))?.balanceMicros).toBe(before + 300);
      expect(await grants.listByProject(projectB, 10)).toEqual([second, first]);
      expect(await grants.grant({ ...first, id: newId('grant_'), projectId: newUuid() })).toBeUndefined();
      expect(await grants.listByProject(projectA, 10)).toEqual([]);
    });
  });

  describe('usage report', () => {
    const query = { startMs: T0, endMs: T0 + 4 * HOUR, bucketMs: HOUR };
    const row = (bucket: number, group: string | null, requests: number, inputTokens: number, outputTokens: number, costMicros: number): UsageBucketRow => ({
      bucketStartMs: T0 + bucket * HOUR, group, requests, inputTokens, outputTokens, costMicros, cachedInputTokens: 0, cacheWriteTokens: 0,
    });
    const sorted = (rows: UsageBucketRow[]) => [...rows].sort((a, b) => a.bucketStartMs - b.bucketStartMs || String(a.group).localeCompare(String(b.group)));

    it('sums one project per hour bucket', async () => {
      expect(sorted(await reports.aggregate({ ...query, projectId: projectA, groupBy: null }))).toEqual([
        row(0, null, 2, 11, 7, 10),
        row(1, null, 1, 100, 0, 1),
        row(3, null, 1, 9, 9, 9),
      ]);
    });

    it('groups by model, key and project', async () => {
      expect(sorted(await reports.aggregate({ ...query, projectId: projectA, groupBy: 'model' }))).toEqual([
        row(0, 'chat', 2, 11, 7, 10),
        row(1, 'embed', 1, 100, 0, 1),
        row(3, 'chat', 1, 9, 9, 9),
      ]);
      expect(sorted(await reports.aggregate({ ...query, projectId: projectA, groupBy: 'key' }))).toEqual([
        row(0, keyA, 2, 11, 7, 10),
        row(1, null, 1, 100, 0, 1),
        row(3, keyA, 1, 9, 9, 9),
      ]);
      const all = sorted(await reports.aggregate({ ...query, projectId: null, groupBy: 'project' }));
      expect(all).toContainEqual(row(2, projectB, 1, 4, 4, 2));
      expect(all.filter((r) => r.group === projectA).reduce((n, r) => n + r.requests, 0)).toBe(4);
    });

    it('takes the start inclusive and the end exclusive, and wider buckets', async () => {
      expect(await reports.aggregate({ projectId: projectA, startMs: T0 + HOUR, endMs: T0 + 3 * HOUR, bucketMs: HOUR, groupBy: null })).toEqual([row(1, null, 1, 100, 0, 1)]);
      expect(await reports.aggregate({ projectId: null, startMs: T0, endMs: T0 + 86_400_000, bucketMs: 86_400_000, groupBy: null })).toEqual([row(0, null, 5, 124, 20, 22)]);
    });

    it("knows each key's last use", async () => {
      expect(await reports.lastUsedByKey(projectA)).toEqual(new Map([[keyA, T0 + 3 * HOUR]]));
      expect(await reports.lastUsedByKey(projectB)).toEqual(new Map());
    });
  });
});

describe.each(cases)('migration 0009 on $name', ({ open }) => {
  it('creates console_sessions and drops it on the way down', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      await sql`select id_hash, role, project_id, key_id, created_at, expires_at from console_sessions`.execute(database.db);
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0008-storefront')).error).toBeUndefined();
      // Asked of this database's own table (introspection would list every schema's on a shared server).
      await expect(sql`select id_hash from console_sessions`.execute(database.db)).rejects.toThrow(/console_sessions/);
    } finally {
      await database.close();
    }
  });
});

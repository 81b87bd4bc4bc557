/** Migrations, the foundation repositories and the credit rule, on SQLite and PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, pendingMigrations } from '../../../src/storage/db/migrate.js';
import { MIGRATIONS } from '../../../src/storage/db/migrations/index.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { ApiKeysRepository, type ApiKeyRecord } from '../../../src/storage/db/repositories/api-keys.repository.js';
import { UsageRepository, type UsageRecord } from '../../../src/storage/db/repositories/usage.repository.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import { systemClock } from '../../../src/domain/shared/clock.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';
import { isAppError } from '../../../src/domain/shared/errors.js';
import { usageRecord } from '../../helpers/usage-records.js';

const cases = await dialectCases();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


describe.each(cases)('foundation storage on $name', ({ open }) => {
  let database: Database;
  let projects: ProjectsRepository;
  let keys: ApiKeysRepository;
  let usage: UsageRepository;
  let billing: BillingService;

  const newProject = async (balanceMicros: number) =>
    projects.insert({ id: newUuid(), name: 'p', balanceMicros, createdAtMs: Date.now() });

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    projects = new ProjectsRepository(database);
    keys = new ApiKeysRepository(database);
    usage = new UsageRepository(database);
    billing = new BillingService(projects, usage, () => ({ inputPerMillionUsd: 0, outputPerMillionUsd: 0 }), systemClock);
  });
  afterAll(async () => database?.close());

  describe('migrations', () => {
    it('are all applied and re-running them is a no-op', async () => {
      expect(await pendingMigrations(database)).toEqual([]);
      expect(await migrateToLatest(database)).toEqual({ applied: [] });
      const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      expect(rows.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort());
    });
  });

  describe('repositories', () => {
    it('projects round-trip, including large and negative balances', async () => {
      const created = await projects.insert({ id: newUuid(), name: 'round trip', balanceMicros: 2 ** 40, createdAtMs: 1_700_000_000_123 });
      expect(await projects.findById(created.id)).toEqual(created);
      expect(await projects.balanceOf(created.id)).toBe(2 ** 40);
      const after = await projects.adjustBalance(created.id, -(2 ** 40) - 5);
      expect(after).toEqual({ ...created, balanceMicros: -5 });
      expect(await projects.findById(newUuid())).toBeUndefined();
      expect(await projects.balanceOf(newUuid())).toBeUndefined();
      expect(await projects.adjustBalance(newUuid(), 1)).toBeUndefined();
    });

    it('api keys round-trip, are found by hash, listed newest first, and revoked once', async () => {
      const project = await newProject(0);
      const make = (n: number): ApiKeyRecord => ({
        id: newId('key_'),
        projectId: project.id,
        name: `k${n}`,
        prefix: 'sk-sluice-abcdef',
        keyHash: `${n}`.padStart(64, 'a'),
        createdAtMs: 1_700_000_000_000 + n,
        revokedAtMs: null,
      });
      const k1 = make(1);
      const k2 = make(2);
      await keys.insert(k1);
      await keys.insert(k2);
      expect(await keys.findByHash(k1.keyHash)).toEqual(k1);
      expect(await keys.findById(k2.id)).toEqual(k2);
      expect(await keys.findByHash('f'.repeat(64))).toBeUndefined();
      expect(await keys.listByProject(project.id)).toEqual([k2, k1]);
      expect(await keys.revoke(k1.id, 1_700_000_000_500)).toEqual({ ...k1, revokedAtMs: 1_700_000_000_500 });
      expect(await keys.revoke(k1.id, 1_700_000_000_900)).toEqual({ ...k1, revokedAtMs: 1_700_000_000_500 });
      expect(await keys.revoke('key_missing', 1)).toBeUndefined();
      await expect(keys.insert({ ...make(3), keyHash: k1.keyHash })).rejects.toThrow();
    });

    it('usage records are written with their debit and listed newest first by cursor', async () => {
      const project = await newProject(1_000);
      const other = await newProject(1_000);
      const written: UsageRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const record = usageRecord(project.id, { keyId: 'key_a', inputTokens: i, costMicros: 10 * i, createdAtMs: 1_700_000_000_000 + i });
        await usage.recordAndDebit(record);
        written.push(record);
      }
      await usage.recordAndDebit(usageRecord(other.id));
      expect(await projects.balanceOf(project.id)).toBe(1_000 - 100);
      expect(await projects.balanceOf(other.id)).toBe(1_000 - 7);
      const newestFirst = [...written].reverse();
      const page1 = await usage.listByProject(project.id, 3);
      expect(page1).toEqual({ items: newestFirst.slice(0, 3), hasMore: true });
      const page2 = await usage.listByProject(project.id, 3, page1.items[2]!.id);
      expect(page2).toEqual({ items: newestFirst.slice(3), hasMore: false });
    });

    it('a failed usage insert leaves the balance untouched (one transaction)', async () => {
      const project = await newProject(100);
      const record = usageRecord(project.id, { costMicros: 40 });
      await usage.recordAndDebit(record);
      await expect(usage.recordAndDebit({ ...record })).rejects.toThrow(); // duplicate id
      expect(await projects.balanceOf(project.id)).toBe(60);
      expect((await usage.listByProject(project.id, 10)).items).toHaveLength(1);
    });
  });

  describe('credits under concurrency', () => {
    it('adjustBalance is atomic: 50 concurrent +1 add exactly 50', async () => {
      const project = await newProject(0);
      await Promise.all(Array.from({ length: 50 }, () => projects.adjustBalance(project.id, 1)));
      expect(await projects.balanceOf(project.id)).toBe(50);
    });

    it('sequential calls stop exactly at zero: ten admitted for ten calls of balance', async () => {
      const COST = 1_000;
      const project = await newProject(10 * COST);
      const principal = { projectId: project.id, keyId: null };
      let admitted = 0;
      for (let i = 0; i < 15; i++) {
        try {
          await billing.assertCanSpend(project.id);
        } catch (err) {
          expect(isAppError(err) && err.kind).toBe('insufficient_quota');
          continue;
        }
        admitted++;
        await billing.record({ principal, model: 'm', route: 'r', inputTokens: 1, outputTokens: 0, requestId: `req_${i}`, status: 200, costMicros: COST });
      }
      expect(admitted).toBe(10);
      expect(await projects.balanceOf(project.id)).toBe(0);
    });

    it('50 concurrent calls overdraw only by the calls in flight at zero; each admitted call recorded once', async () => {
      const COST = 1_000;
      const CALLS_OF_BALANCE = 10;
      const project = await newProject(CALLS_OF_BALANCE * COST);
      const principal = { projectId: project.id, keyId: null };
      let recorded = 0;
      let crossedZero = false; // set once the 10th debit has committed
      let admittedAtCrossing = 0;
      let admittedAfterCrossing = 0;
      let refused = 0;
      const admitted: string[] = [];
      const waiters: { records: number; resolve: () => void }[] = [];
      const recordsDone = (records: number) =>
        recorded >= records ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ records, resolve }));

      // Call i checks only once floor(i / 4) debits have committed, so checks and debits
      // interleave whatever the database's speed; calls 40..49 check after the 10th debit.
      const one = async (i: number) => {
        await recordsDone(Math.floor(i / 4));
        await sleep(i % 3);
        const checkedAfterCrossing = crossedZero;
        try {
          await billing.assertCanSpend(project.id);
        } catch (err) {
          if (!isAppError(err) || err.kind !== 'insufficient_quota') throw err;
          refused++;
          return;
        }
        if (checkedAfterCrossing) admittedAfterCrossing++;
        admitted.push(`req_${i}`);
        await sleep(i % 3);
        await billing.record({ principal, model: 'm', route: 'r', inputTokens: 1, outputTokens: 0, requestId: `req_${i}`, status: 200, costMicros: COST });
        if (++recorded === CALLS_OF_BALANCE) {
          crossedZero = true;
          admittedAtCrossing = admitted.length;
        }
        for (const waiter of waiters.filter((w) => w.records <= recorded)) waiter.resolve();
      };
      await Promise.all(Array.from({ length: 50 }, (_, i) => one(i)));

      expect(admitted.length + refused).toBe(50);
      expect(refused).toBeGreaterThanOrEqual(10);
      expect(admitted.filter((id) => Number(id.slice(4)) >= 40)).toEqual([]);
      expect(admittedAfterCrossing).toBe(0);
      expect(admitted.length).toBe(admittedAtCrossing);
      // The overdraft is exactly the calls that were in flight when the balance reached zero.
      const balance = (await projects.balanceOf(project.id))!;
      expect(balance).toBe(-(admittedAtCrossing - CALLS_OF_BALANCE) * COST);
      const records = (await usage.listByProject(project.id, 100)).items;
      expect(records.map((r) => r.requestId).sort()).toEqual([...admitted].sort());
      expect(records.reduce((sum, r) => sum + r.costMicros, 0)).toBe(admitted.length * COST);
      await expect(billing.assertCanSpend(project.id)).rejects.toMatchObject({ kind: 'insufficient_quota' });
    });
  });
});

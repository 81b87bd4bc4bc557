/** Migrations, the foundation repositories and the credit rule, on SQLite and PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, pendingMigrations } from '../../../src/storage/db/migrate.js';
import { MIGRATIONS } from '../../../src/storage/db/migrations/index.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from '../../../src/storage/db/repositories/api-keys.repository.js';
import type { ApiKeyRecord } from '../../../src/domain/identity/api-key.types.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import { CreditMeter } from '../../../src/domain/billing/credit-meter.js';
import { ReservationBook } from '../../../src/domain/billing/reservations.js';
import type { MeteredCall } from '../../../src/domain/billing/meter.js';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
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
  const callOf = (requestId: string, estimateMicros: number): MeteredCall => ({
    model: 'm', route: 'r', requestId, inputTokens: 1, maxOutputTokens: 0, estimateMicros,
  });

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
        policy: null,
        previousKeyHash: null,
        previousValidUntilMs: null,
        ownerUserId: null,
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
      const meter = new CreditMeter(billing, new ReservationBook());
      const principal = apiKeyPrincipal(project.id, null);
      let admitted = 0;
      for (let i = 0; i < 15; i++) {
        let admission;
        try {
          admission = await meter.admit(principal, callOf(`req_${i}`, COST));
        } catch (err) {
          expect(isAppError(err) && err.kind).toBe('insufficient_quota');
          continue;
        }
        admitted++;
        await admission.settle({ inputTokens: 1, outputTokens: 0, status: 200, costMicros: COST });
      }
      expect(admitted).toBe(10);
      expect(await projects.balanceOf(project.id)).toBe(0);
    });

    it('200 concurrent calls on credit for 20 admit exactly 20, each recorded once, and never overdraw', async () => {
      const COST = 1_000;
      const project = await newProject(20 * COST);
      const meter = new CreditMeter(billing, new ReservationBook());
      const principal = apiKeyPrincipal(project.id, null);
      let refused = 0;
      const admitted: string[] = [];
      const one = async (i: number) => {
        await sleep(i % 3);
        let admission;
        try {
          admission = await meter.admit(principal, callOf(`req_${i}`, COST));
        } catch (err) {
          if (!isAppError(err) || err.kind !== 'insufficient_quota') throw err;
          refused++;
          return;
        }
        admitted.push(`req_${i}`);
        await sleep(i % 5);
        await admission.settle({ inputTokens: 1, outputTokens: 0, status: 200, costMicros: COST });
      };
      await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));

      expect(admitted).toHaveLength(20);
      expect(refused).toBe(180);
      expect(await projects.balanceOf(project.id)).toBe(0);
      const records = (await usage.listByProject(project.id, 300)).items;
      expect(records.map((r) => r.requestId).sort()).toEqual([...admitted].sort());
      await expect(meter.admit(principal, callOf('req_after', 1))).rejects.toMatchObject({ kind: 'insufficient_quota' });
    });

    it('a hold is replaced by the actual cost: calls cheaper than estimated leave room for more', async () => {
      const project = await newProject(10_000);
      const meter = new CreditMeter(billing, new ReservationBook());
      const principal = apiKeyPrincipal(project.id, null);
      const first = await meter.admit(principal, callOf('req_a', 6_000));
      // 4,000 left beside the hold: an estimate of 5,000 does not fit while the first is in flight.
      await expect(meter.admit(principal, callOf('req_b', 5_000))).rejects.toMatchObject({ kind: 'insufficient_quota' });
      await first.settle({ inputTokens: 1, outputTokens: 0, status: 200, costMicros: 1_000 });
      const second = await meter.admit(principal, callOf('req_b', 5_000));
      second.release(); // failed: nothing charged, the hold is given back
      const third = await meter.admit(principal, callOf('req_c', 9_000));
      await third.settle({ inputTokens: 1, outputTokens: 0, status: 200, costMicros: 9_000 });
      expect(await projects.balanceOf(project.id)).toBe(0);
      expect((await usage.listByProject(project.id, 10)).items.map((r) => r.requestId)).toEqual(['req_c', 'req_a']);
    });
  });
});

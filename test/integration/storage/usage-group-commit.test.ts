/**
 * Usage records committed in groups, on SQLite and PostgreSQL: a group debits each paying
 * project once with the sum of its records (on PostgreSQL in one UPDATE … FROM (VALUES …),
 * returning every balance it left), and a group that fails is written record by record,
 * each record once, the bad one failing alone with its own error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import { MAX_GROUP } from '../../../src/domain/billing/usage-writer.js';
import { systemClock } from '../../../src/domain/shared/clock.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { usageRecord } from '../../helpers/usage-records.js';

const cases = await dialectCases();

describe.each(cases)('usage group commit on $name', ({ open, flavor }) => {
  let database: Database;
  let projects: ProjectsRepository;
  let usage: UsageRepository;
  let billing: BillingService;

  const newProject = async (balanceMicros: number) => (await projects.insert({ id: newUuid(), name: 'p', balanceMicros, createdAtMs: Date.now() })).id;
  const balanceOf = async (id: string) => (await projects.findById(id))!.balanceMicros;
  const recordsOf = async (id: string) =>
    (await sql<{ n: number | string; cost: number | string | null }>`select count(*) as n, sum(cost_micros) as cost from usage_records where project_id = ${id}`.execute(database.db))
      .rows.map((r) => ({ n: Number(r.n), cost: Number(r.cost ?? 0) }))[0];

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    projects = new ProjectsRepository(database);
    usage = new UsageRepository(database);
    billing = new BillingService(projects, usage, () => ({ inputPerMillionUsd: 0, outputPerMillionUsd: 0 }), systemClock);
  });
  afterAll(async () => database?.close());

  it('debits each of a group’s projects by the sum of its records and returns the balances left where the database reports them', async () => {
    const [a, b, c] = [await newProject(1_000), await newProject(500), await newProject(0)];
    const after = await usage.recordAndDebitMany([
      usageRecord(a, { costMicros: 30 }),
      usageRecord(b, { costMicros: 12 }),
      usageRecord(a, { costMicros: 5 }),
      usageRecord(c, { costMicros: 0 }),
      usageRecord(b, { costMicros: 8 }),
    ]);
    if (flavor === 'postgres') expect(after).toEqual(new Map([[a, 965], [b, 480]]));
    else expect(after).toBeUndefined();
    expect([await balanceOf(a), await balanceOf(b), await balanceOf(c)]).toEqual([965, 480, 0]);
    expect([await recordsOf(a), await recordsOf(b), await recordsOf(c)]).toEqual([{ n: 2, cost: 35 }, { n: 2, cost: 20 }, { n: 1, cost: 0 }]);
  });

  it('writes a failed group record by record: the others once each, the bad one rejected alone', async () => {
    const [a, b] = [await newProject(1_000), await newProject(1_000)];
    const taken = usageRecord(a, { costMicros: 1 });
    await billing.write(taken);
    const commitsBefore = billing.commits;
    // One turn's writes share a group; the record whose id is taken fails it.
    const results = await Promise.allSettled([
      billing.write(usageRecord(a, { costMicros: 10 })),
      billing.write(usageRecord(b, { costMicros: 20 })),
      billing.write({ ...usageRecord(a, { costMicros: 40 }), id: taken.id }),
      billing.write(usageRecord(b, { costMicros: 30 })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(billing.commits - commitsBefore).toBe(3);
    expect([await balanceOf(a), await balanceOf(b)]).toEqual([989, 950]);
    expect([await recordsOf(a), await recordsOf(b)]).toEqual([{ n: 2, cost: 11 }, { n: 2, cost: 50 }]);
  });

  it('commits a turn’s records in one transaction, and a burst larger than a group in groups of at most MAX_GROUP', async () => {
    const a = await newProject(10_000_000);
    let commitsBefore = billing.commits;
    await Promise.all(Array.from({ length: 7 }, () => billing.write(usageRecord(a, { costMicros: 3 }))));
    expect(billing.commits - commitsBefore).toBe(1);
    commitsBefore = billing.commits;
    await Promise.all(Array.from({ length: MAX_GROUP * 2 + 1 }, () => billing.write(usageRecord(a, { costMicros: 1 }))));
    expect(billing.commits - commitsBefore).toBe(3);
    expect(await balanceOf(a)).toBe(10_000_000 - 21 - (MAX_GROUP * 2 + 1));
    expect(await recordsOf(a)).toEqual({ n: 7 + MAX_GROUP * 2 + 1, cost: 21 + MAX_GROUP * 2 + 1 });
  });
});

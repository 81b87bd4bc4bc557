/**
 * The spend report's daily rollups (migration 0022) on SQLite and PostgreSQL: over random
 * records (no key or a key, no end user or one, zero, one or two tags, cached tokens), the
 * report read from the rollups is the report read from the records, row for row, for every
 * grouping, one project and every project, whole-day and partial-day ranges; the sums are
 * the records' own; a day is rolled up only an hour after it ended; a record that reaches a
 * rolled-up day late is counted once the day is checked again; two janitors at once give
 * the same rollups; the migration reverts.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { usageRecord } from '../../helpers/usage-records.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import type { Database } from '../../../src/storage/db/database.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { UsageReportsRepository } from '../../../src/storage/db/repositories/usage-reports.repository.js';
import { UsageRollupsRepository } from '../../../src/storage/db/repositories/usage-rollups.repository.js';
import { SpendRollups } from '../../../src/domain/billing/spend-rollups.js';
import type { SpendGroup, SpendQuery, SpendRow } from '../../../src/domain/billing/usage-reports.port.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';

const cases = await dialectCases();
const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 1);
const DAYS = 6;
const GROUPS: readonly SpendGroup[] = ['key', 'model', 'tag', 'end_user', 'day'];
const PROJECTS = ['proj_rollup_a', 'proj_rollup_b'];

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomRecords(count: number, seed: number): UsageRecord[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const tagSets: string[][] = [[], ['alpha'], ['beta'], ['alpha', 'gamma'], ['beta', 'gamma']];
  return Array.from({ length: count }, (_, i) => {
    const projectId = pick(PROJECTS);
    const record = usageRecord(projectId, {
      keyId: pick([null, 'key_1', 'key_2', 'key_3']),
      model: pick(['model-a', 'model-b', 'model-c']),
      inputTokens: Math.floor(next() * 5000),
      outputTokens: Math.floor(next() * 900),
      costMicros: Math.floor(next() * 100_000),
      requestId: `req_${i}`,
      createdAtMs: START + Math.floor(next() * DAYS * DAY),
    });
    const tags = pick(tagSets);
    if (tags.length > 0) record.tags = tags;
    const endUser = pick([null, 'alice', 'bob', 'carol']);
    if (endUser) record.endUser = endUser;
    if (next() < 0.5) record.cachedInputTokens = Math.floor(record.inputTokens / 2);
    if (next() < 0.2) record.cacheWriteTokens = 7;
    return record;
  });
}

/** The report summed here from the records themselves, sorted by group (null first). */
function expectedReport(records: readonly UsageRecord[], query: SpendQuery): SpendRow[] {
  const rows = new Map<string | null, SpendRow>();
  const add = (group: string | null, r: UsageRecord) => {
    let row = rows.get(group);
    if (!row) rows.set(group, (row = { group, requests: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costMicros: 0 }));
    row.requests++;
    row.inputTokens += r.inputTokens;
    row.outputTokens += r.outputTokens;
    row.cachedInputTokens += r.cachedInputTokens ?? 0;
    row.cacheWriteTokens += r.cacheWriteTokens ?? 0;
    row.costMicros += r.costMicros;
  };
  for (const r of records) {
    if (query.projectId !== null && r.projectId !== query.projectId) continue;
    if (r.createdAtMs < query.sinceMs || r.createdAtMs >= query.untilMs) continue;
    if (query.groupBy === 'tag') for (const tag of r.tags ?? []) add(tag, r);
    else if (query.groupBy === 'key') add(r.keyId, r);
    else if (query.groupBy === 'model') add(r.model, r);
    else if (query.groupBy === 'end_user') add(r.endUser ?? null, r);
    else add(new Date(r.createdAtMs).toISOString().slice(0, 10), r);
  }
  return sortedRows([...rows.values()]);
}

const sortedRows = (rows: SpendRow[]) => [...rows].sort((x, y) => (x.group === y.group ? 0 : x.group === null ? -1 : y.group === null ? 1 : x.group < y.group ? -1 : 1));

async function report(reports: UsageReportsRepository, query: SpendQuery): Promise<SpendRow[]> {
  const rows: SpendRow[] = [];
  for await (const row of reports.spend(query)) rows.push(row);
  return rows;
}

/** Ranges on day boundaries, across partial days at either edge or both, and within one day. */
const RANGES: ReadonlyArray<[number, number]> = [
  [START, START + DAYS * DAY],
  [START + DAY, START + 4 * DAY],
  [START + 5 * HOUR, START + 3 * DAY + 7 * HOUR + 123],
  [START + DAY + 1, START + 5 * DAY],
  [START, START + 2 * DAY + 1],
  [START + 2 * DAY + HOUR, START + 2 * DAY + 20 * HOUR],
  [START - 3 * DAY, START + 10 * DAY],
];

function queries(): SpendQuery[] {
  const all: SpendQuery[] = [];
  for (const [sinceMs, untilMs] of RANGES) {
    for (const projectId of [PROJECTS[0]!, null]) for (const groupBy of GROUPS) all.push({ projectId, sinceMs, untilMs, groupBy });
  }
  return all;
}

async function seeded(database: Database, records: readonly UsageRecord[]): Promise<void> {
  await migrateToLatest(database);
  for (const id of PROJECTS) await database.db.insertInto('projects').values({ id, name: id, balance_micros: 0, created_at: START }).execute();
  const usage = new UsageRepository(database);
  for (let i = 0; i < records.length; i += 50) await usage.recordAndDebitMany(records.slice(i, i + 50));
}

const clockAt = (ms: number) => ({ now: ms, nowMs() { return this.now; } });

describe.each(cases)('spend rollups on $name', ({ open }) => {
  it('answers every grouping and range from the rollups exactly as from the records', async () => {
    const database = await open();
    try {
      const records = randomRecords(600, 57);
      await seeded(database, records);
      const reports = new UsageReportsRepository(database);
      const fromRecords = new Map<SpendQuery, SpendRow[]>();
      for (const query of queries()) {
        const rows = await report(reports, query);
        expect(sortedRows(rows)).toEqual(expectedReport(records, query));
        fromRecords.set(query, rows);
      }

      const store = new UsageRollupsRepository(database);
      const rollups = new SpendRollups(store, clockAt(START + DAYS * DAY + 2 * HOUR));
      expect(await rollups.run()).toBe(DAYS);
      expect(await store.rolledUntil()).toBe(START + DAYS * DAY);
      const modelRows = await database.db.selectFrom('usage_rollups').select(sql<number>`count(*)`.as('n')).where('dimension', '=', 'model').executeTakeFirstOrThrow();
      expect(Number(modelRows.n)).toBe(new Set(records.map((r) => `${r.projectId} ${Math.floor(r.createdAtMs / DAY)} ${r.model}`)).size);

      for (const [query, rows] of fromRecords) expect(await report(reports, query), JSON.stringify(query)).toEqual(rows);
    } finally {
      await database.close();
    }
  });

  it('rolls a day up an hour after it ends, and again when a record reaches it late', async () => {
    const database = await open();
    try {
      const records = randomRecords(200, 7).map((r) => ({ ...r, createdAtMs: START + (r.createdAtMs % (2 * DAY)) }));
      await seeded(database, records);
      const store = new UsageRollupsRepository(database);
      const clock = clockAt(START + 2 * DAY + HOUR - 1);
      const rollups = new SpendRollups(store, clock);
      expect(await rollups.run()).toBe(1);
      expect(await store.rolledUntil()).toBe(START + DAY);
      clock.now = START + 2 * DAY + HOUR;
      expect(await rollups.run()).toBe(1);
      expect(await store.rolledUntil()).toBe(START + 2 * DAY);

      const late = usageRecord(PROJECTS[1]!, { createdAtMs: START + 5 * HOUR, costMicros: 1_000_000, tags: ['late'], endUser: 'dave', keyId: 'key_9' });
      await new UsageRepository(database).recordAndDebitMany([late]);
      const reports = new UsageReportsRepository(database);
      const month: SpendQuery = { projectId: null, sinceMs: START, untilMs: START + 31 * DAY, groupBy: 'key' };
      // Before the day is checked again the report reads its rollups, which do not hold the late record yet.
      expect(await report(reports, month)).not.toContainEqual(expect.objectContaining({ group: 'key_9' }));
      clock.now += 599_998;
      expect(await rollups.run()).toBe(0);
      clock.now += 1;
      expect(await rollups.run()).toBe(1);
      const all = [...records, late];
      for (const groupBy of GROUPS) {
        const query = { ...month, groupBy };
        expect(sortedRows(await report(reports, query))).toEqual(expectedReport(all, query));
      }
    } finally {
      await database.close();
    }
  });

  it('gives the same rollups when two janitors roll the same days at once', async () => {
    const database = await open();
    try {
      const records = randomRecords(300, 11);
      await seeded(database, records);
      const clock = clockAt(START + DAYS * DAY + 2 * HOUR);
      const passes = await Promise.all([new SpendRollups(new UsageRollupsRepository(database), clock).run(), new SpendRollups(new UsageRollupsRepository(database), clock).run()]);
      expect(passes[0]! + passes[1]!).toBeGreaterThanOrEqual(DAYS);
      expect(await new UsageRollupsRepository(database).rolledUntil()).toBe(START + DAYS * DAY);
      const reports = new UsageReportsRepository(database);
      for (const groupBy of GROUPS) {
        const query: SpendQuery = { projectId: null, sinceMs: START, untilMs: START + DAYS * DAY, groupBy };
        expect(sortedRows(await report(reports, query))).toEqual(expectedReport(records, query));
      }
    } finally {
      await database.close();
    }
  });

  it('starts at the last closed day when there are no records yet, and the migration reverts', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      const store = new UsageRollupsRepository(database);
      expect(await new SpendRollups(store, clockAt(START + 30 * HOUR)).run()).toBe(0);
      expect(await store.rolledUntil()).toBe(START + DAY);
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0020-usage-key-spend')).error).toBeUndefined();
      const tables = (await database.db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('usage_rollups');
      expect(tables).not.toContain('usage_rollup_state');
    } finally {
      await database.close();
    }
  });
});

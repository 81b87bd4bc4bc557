/**
 * The spend report at scale: a million usage records in one month of one project (plus a
 * second project's hundred thousand), with 100 keys, 20 models, 10,000 end users and up
 * to two of 50 tags per record (about a million tag rows), on SQLite and on PostgreSQL.
 * The daily rollups are then made as the janitor makes them (src/domain/billing/spend-rollups.ts),
 * passes of seven days, as of two days before the month's end, so that a report reads 29
 * days of rollups and the last two days (today and yesterday, at worst, within the hour
 * after midnight) from the records.
 * Times each group-by of the month (the project's, and every project's) read to its last
 * row as the report streams it (a page of rows at a time); the median of
 * three runs. Target: each within 1 s. The rows are made by the database itself (a
 * recursive CTE on SQLite, generate_series on PostgreSQL), not through the write path.
 * `BENCH_SPEND_RECORDS` sets the first project's records (a million).
 */
import { sql, type Kysely } from 'kysely';
import type { BenchRow } from './run.js';
import { median } from './measure.js';
import { openDatabase, type Database, type Tables } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { UsageReportsRepository } from '../src/storage/db/repositories/usage-reports.repository.js';
import { UsageRollupsRepository } from '../src/storage/db/repositories/usage-rollups.repository.js';
import { SPEND_ROLLUP_DEFAULTS, SpendRollups } from '../src/domain/billing/spend-rollups.js';
import type { SpendGroup } from '../src/domain/billing/usage-reports.port.js';
import { postgresReachable, postgresSchema, tempDir } from '../test/helpers/databases.js';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';

const RECORDS = Number(process.env.BENCH_SPEND_RECORDS ?? 1_000_000);
const OTHER_RECORDS = Math.floor(RECORDS / 10);
const MONTH_START = Date.UTC(2026, 2, 1);
const MONTH_MS = 31 * 86_400_000;
const GROUPS: readonly SpendGroup[] = ['key', 'model', 'tag', 'end_user', 'day'];
/** The days the bench leaves to the records: the month's last two. */
const UNROLLED_DAYS = 2;

/** Record n's columns as SQL over the integer `n` (same expressions on both databases). */
function recordColumns(project: string, spacingMs: number) {
  return sql`${sql.lit(project)}, 'usage_' || ${sql.lit(project)} || '_' || n, 'key_' || (n % 100), 'model-' || (n % 20), '/v1/chat/completions',
    100 + n % 900, 10 + n % 300, 50 + n % 5000, 'req_' || n, 200, ${sql.lit(MONTH_START)} + cast(n as bigint) * ${sql.lit(spacingMs)},
    case when n % 7 = 0 then null else 'user-' || (n % 10000) end,
    case when n % 3 = 0 then null when n % 3 = 1 then 'tag-' || (n % 50) else 'tag-' || (n % 50) || ',tag-' || ((n + 1) % 50) end`;
}

const RECORD_COLUMN_NAMES = sql.raw(
  'project_id, id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at, end_user, tags',
);

/** Rows 1..count, made by the database. */
function numbers(database: Database, count: number) {
  return database.flavor === 'postgres'
    ? sql`select n from generate_series(1, ${sql.lit(count)}) as g(n)`
    : sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${sql.lit(count)}) select n from s`;
}

async function fill(database: Database, project: string, count: number): Promise<void> {
  const db: Kysely<Tables> = database.db;
  await db.insertInto('projects').values({ id: project, name: project, balance_micros: 0, created_at: MONTH_START }).execute();
  const spacing = Math.floor(MONTH_MS / (count + 1));
  await sql`insert into usage_records (${RECORD_COLUMN_NAMES}) select ${recordColumns(project, spacing)} from (${numbers(database, count)}) as numbered`.execute(db);
  // One tag row per record and tag, as the write path makes them (usage.repository.ts).
  for (const offset of [0, 1]) {
    await sql`insert into usage_tags (project_id, created_at, tag, usage_id, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_micros)
      select project_id, created_at, 'tag-' || ((cast(substr(request_id, 5) as integer) + ${sql.lit(offset)}) % 50), id, input_tokens, output_tokens, 0, 0, cost_micros
      from usage_records where project_id = ${sql.lit(project)} and cast(substr(request_id, 5) as integer) % 3 ${sql.raw(offset === 0 ? '<> 0' : '= 2')}`.execute(db);
  }
  await sql`analyze`.execute(db);
}

/** Wall time of the report read whole, and this process's CPU time meanwhile (SQLite runs in it; PostgreSQL's work is the server's). */
async function timed(reports: UsageReportsRepository, projectId: string | null, groupBy: SpendGroup): Promise<{ ms: number; cpuMs: number; groups: number }> {
  const runs: number[] = [];
  const cpu: number[] = [];
  let groups = 0;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    groups = 0;
    for await (const _row of reports.spend({ projectId, sinceMs: MONTH_START, untilMs: MONTH_START + MONTH_MS, groupBy })) groups++;
    runs.push(performance.now() - started);
    const used = process.cpuUsage(cpuStarted);
    cpu.push((used.user + used.system) / 1000);
  }
  return { ms: median(runs), cpuMs: median(cpu), groups };
}

/** The janitor's passes until the days closed two days before the month's end are rolled up. */
async function rollUp(label: string, database: Database): Promise<BenchRow> {
  const nowMs = MONTH_START + MONTH_MS - UNROLLED_DAYS * 86_400_000 + SPEND_ROLLUP_DEFAULTS.marginMs;
  const rollups = new SpendRollups(new UsageRollupsRepository(database), { nowMs: () => nowMs });
  const started = performance.now();
  let days = 0;
  for (let rolled = await rollups.run(); rolled > 0; rolled = await rollups.run()) days += rolled;
  await sql`analyze`.execute(database.db);
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from usage_rollups`.execute(database.db);
  return { name: `${label}: roll up ${days} days (the janitor's passes)`, value: (performance.now() - started) / 1000, unit: 's', note: `${Number(rows[0]!.n)} rollup rows` };
}

async function measure(label: string, database: Database): Promise<BenchRow[]> {
  await migrateToLatest(database);
  const started = performance.now();
  await fill(database, 'proj_big', RECORDS);
  await fill(database, 'proj_other', OTHER_RECORDS);
  const rows: BenchRow[] = [{ name: `${label}: load ${RECORDS + OTHER_RECORDS} records and their tag rows`, value: (performance.now() - started) / 1000, unit: 's' }];
  rows.push(await rollUp(label, database));
  const reports = new UsageReportsRepository(database);
  for (const [scope, projectId] of [['one project', 'proj_big'], ['every project', null]] as const) {
    for (const groupBy of GROUPS) {
      const { ms, cpuMs, groups } = await timed(reports, projectId, groupBy);
      const cpuNote = database.flavor === 'sqlite' ? `, ${cpuMs.toFixed(0)} ms CPU in this process` : '';
      rows.push({ name: `${label}: a month by ${groupBy}, ${scope}`, value: ms, unit: 'ms', note: `${groups} groups, median of 3${cpuNote}` });
    }
  }
  return rows;
}

export default async function spendBench(): Promise<BenchRow[]> {
  // Wall times on 2 shared cores say little when other processes hold them: the row says how loaded they were.
  const rows: BenchRow[] = [{ name: 'load average (1 min) at the start', value: loadavg()[0]!, unit: '' }];
  const dir = tempDir('sluice-spend-bench-');
  const sqlite = openDatabase({ kind: 'sqlite', path: path.join(dir, 'sluice.db') });
  try {
    rows.push(...(await measure('SQLite', sqlite)));
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (!(await postgresReachable())) return [...rows, { name: 'PostgreSQL', value: 0, unit: 'skipped', note: 'no server at SLUICE_TEST_POSTGRES_URL' }];
  const { url, drop } = await postgresSchema();
  const postgres = openDatabase({ kind: 'postgres', url, usageSynchronousCommit: true, preparedStatements: true });
  try {
    rows.push(...(await measure('PostgreSQL', postgres)));
  } finally {
    await postgres.close();
    await drop();
  }
  rows.push({ name: 'load average (1 min) at the end', value: loadavg()[0]!, unit: '' });
  return rows;
}

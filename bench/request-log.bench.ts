/**
 * The request log at scale on PostgreSQL: BENCH_LOG_ROWS (default 10 million) entries
 * over 100 projects and 30 days, built in the database with generate_series (one
 * INSERT … SELECT per million rows, into the migrated table with its indexes), then:
 * a project's newest page, the same filtered by model, by status `error`, by session,
 * by a time window and by cost, the second page after a cursor, and a lookup by id,
 * each through the repository the routes use, timed over BENCH_ROUNDS runs (median and
 * worst). Targets: a filtered list ≤ 200 ms, a lookup ≤ 20 ms.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { RequestLogRepository } from '../src/storage/db/repositories/request-log.repository.js';
import type { RequestLogFilter } from '../src/domain/request-log/request-log.types.js';
import { postgresReachable, postgresSchemaDatabase } from '../test/helpers/databases.js';
import type { BenchRow } from './run.js';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 10_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const CHUNK = 1_000_000;
const DAY_MS = 86_400_000;
const NOW_MS = Date.UTC(2026, 11, 1);

/** Rows `from`..`to` (1-based): project i % 100, a model of 5, one status in 7 an error, a session of 50 calls, spread over 30 days. */
const fill = (from: number, to: number) => sql`
  insert into request_log
  select 'req_' || lpad(i::text, 12, '0'), 'proj-' || (i % 100), 'key-' || (i % 300), ${NOW_MS}::bigint - (i::bigint * ${Math.max(1, Math.floor((30 * DAY_MS) / ROWS))}::bigint)::bigint,
    '/v1/chat/completions', 'chat-completions', 'v1', 'model-' || (i % 5), 'model-' || (i % 5), null, 'dep-' || (i % 7),
    case when i % 7 = 0 then 429 else 200 end, case when i % 7 = 0 then 'rate_limit_exceeded' else null end, (i % 2), 'sess-' || (i / 50), null,
    '["team-' || (i % 10) || '"]', null, 500 + i % 1000, 100 + i % 300, i % 400, (i % 5000)::bigint, 1, 30, 200, 240,
    '[]', 0, '[]', 10000, (i % 5000)::bigint, 0
  from generate_series(${from}::bigint, ${to}::bigint) as i`;

function timed(samples: number[]): { median: number; worst: number } {
  const sorted = samples.toSorted((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, worst: sorted[sorted.length - 1]! };
}

export default async function run(): Promise<BenchRow[]> {
  if (!(await postgresReachable())) return [{ name: 'skipped', value: 0, unit: '', note: 'PostgreSQL is not reachable' }];
  const { database } = await postgresSchemaDatabase();
  try {
    await migrateToLatest(database);
    const built = performance.now();
    for (let from = 1; from <= ROWS; from += CHUNK) await fill(from, Math.min(ROWS, from + CHUNK - 1)).execute(database.db);
    await sql`analyze request_log`.execute(database.db);
    const buildSeconds = (performance.now() - built) / 1000;
    const repo = new RequestLogRepository(database);
    const project = 'proj-42';
    const newestPage = await repo.list({ projectId: project }, 20, null);
    const cursor = newestPage!.items.at(-1)!.id;
    const lists: Array<[string, RequestLogFilter, string | null]> = [
      ['newest page of a project', { projectId: project }, null],
      ['by model', { projectId: project, model: 'model-2' }, null],
      ['status error', { projectId: project, status: 'error' }, null],
      ['by session', { projectId: project, sessionId: 'sess-4000' }, null],
      ['by tag', { projectId: project, tag: 'team-2' }, null],
      ['a day, cost ≥ $0.004', { projectId: project, sinceMs: NOW_MS - 10 * DAY_MS, untilMs: NOW_MS - 9 * DAY_MS, minCostMicros: 4000 }, null],
      ['second page (cursor)', { projectId: project }, cursor],
      ['across projects, status error', { projectId: null, status: 'error' }, null],
    ];
    const rows: BenchRow[] = [{ name: `built ${ROWS} rows`, value: buildSeconds, unit: 's' }];
    for (const [name, filter, after] of lists) {
      const samples: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const started = performance.now();
        await repo.list(filter, 20, after);
        samples.push(performance.now() - started);
      }
      const { median, worst } = timed(samples);
      rows.push({ name: `list, ${name}`, value: median, unit: 'ms', note: `worst ${worst.toFixed(1)} ms; target ≤ 200 ms` });
    }
    const lookups: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const id = `req_${String(1 + Math.floor(Math.random() * ROWS)).padStart(12, '0')}`;
      const started = performance.now();
      await repo.get(id, `proj-${Number(id.slice(4)) % 100}`);
      lookups.push(performance.now() - started);
    }
    const { median, worst } = timed(lookups);
    rows.push({ name: 'lookup by id', value: median, unit: 'ms', note: `worst ${worst.toFixed(1)} ms; target ≤ 20 ms` });
    return rows;
  } finally {
    await database.close();
  }
}

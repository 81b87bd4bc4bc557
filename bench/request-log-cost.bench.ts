/**
 * What the request log costs a plain chat call at saturation, in one run: four Sluice
 * replicas, each in its own process (`dist`, as `npm start` runs it, LOG_LEVEL=warn) on its
 * own PostgreSQL schema, before one zero-latency OpenAI-compatible engine:
 *  - `off`: `request_log.enabled: false` (the call's story is still told; nothing is queued or written);
 *  - `metadata`: the log as shipped, bodies `off` (target: at most 3% of `off`'s req/s lost);
 *  - `full`: every project keeps its bodies in full (target: at most 15% lost);
 *  - `stalled`: metadata, with the log's table locked for the whole run by another
 *    connection (`LOCK TABLE request_log IN ACCESS EXCLUSIVE MODE`, held in an open
 *    transaction), so the writer's insert waits; its queue is capped at 2,000 entries
 *    (BENCH_STALL_MAX_QUEUE) so that it fills within a short run. Every call must still be
 *    answered 200 (0 failed), and once the lock is released and the writer has caught up,
 *    every call served (a usage record) has its entry or is counted in
 *    `sluice_request_log_dropped_total`: the gap is all in the metric. The same is checked
 *    of the metadata and full replicas.
 * Each mode also reports its CPU per call: the Sluice process's (all its threads) and
 * PostgreSQL's (every postgres process on the machine, by pid), which says whether a loss is
 * the server's work or the database's on the cores they share.
 * Autocannon (32 connections, in a worker thread) loads one replica at a time; rounds take
 * the four in turn, the order reversed every other round, and each ratio is taken within
 * its round (median of the rounds), so drifting load from elsewhere weighs on both sides.
 *
 * Run: `npm run bench request-log-cost` (PostgreSQL at SLUICE_TEST_POSTGRES_URL or
 * postgres://postgres@127.0.0.1:5432/test; skipped without it). BENCH_SECONDS per phase
 * (default 5), BENCH_ROUNDS (default 5), BENCH_WARMUP_SECONDS (default 2). A smoke run:
 * `BENCH_SECONDS=1 BENCH_ROUNDS=1 BENCH_WARMUP_SECONDS=1 npm run bench request-log-cost`.
 * (`npm run bench request-log` runs this and the 10-million-row bench.)
 */
import pg from 'pg';
import { postgresReachable, postgresSchema } from '../test/helpers/databases.js';
import { postgresCpuByPid, postgresCpuSince } from './cpu-time.js';
import { median, runWorker } from './measure.js';
import { startSluice, startZeroEngine, type SluiceProcess } from './processes.js';
import { AUTOCANNON_PATH, AUTOCANNON_WORKER_SOURCE, BODY, CONNECTIONS } from './proxy-load.js';
import type { BenchRow } from './run.js';

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const STALL_MAX_QUEUE = Number(process.env.BENCH_STALL_MAX_QUEUE ?? 2000);

const MODES = ['off', 'metadata', 'full', 'stalled'] as const;
type Mode = (typeof MODES)[number];

const LOG_YAML: Record<Mode, string> = {
  off: 'request_log:\n  enabled: false\n',
  metadata: '',
  full: 'request_log:\n  bodies: full\n',
  stalled: `request_log:\n  max_queue: ${STALL_MAX_QUEUE}\n`,
};

interface Replica {
  mode: Mode;
  server: SluiceProcess;
  key: string;
  projectId: string;
  databaseUrl: string;
}

interface Phase {
  rps: number;
  failed: number;
  /** CPU per call served in the phase, µs: the Sluice process's (all threads), and PostgreSQL's (every postgres process). */
  sluiceCpu: number;
  postgresCpu: number;
}

/** Autocannon at saturation for `seconds`; the failures are counted, not thrown (the stalled replica's are a figure). */
async function saturate(replica: Replica, seconds: number): Promise<Phase> {
  const [sluiceBefore, postgresBefore] = [replica.server.cpuMicros(), postgresCpuByPid()];
  const result = await runWorker<{ error?: string; rps: number; non2xx: number; errors: number }>(AUTOCANNON_WORKER_SOURCE, {
    autocannonPath: AUTOCANNON_PATH,
    options: {
      url: `${replica.server.baseUrl}/v1/chat/completions`,
      method: 'POST',
      headers: { 'x-api-key': replica.key, 'content-type': 'application/json' },
      body: BODY,
      connections: CONNECTIONS,
      duration: seconds,
    },
  });
  if (result.error) throw new Error(result.error);
  const calls = Math.max(1, result.rps * seconds);
  return {
    rps: result.rps,
    failed: result.non2xx + result.errors,
    sluiceCpu: (replica.server.cpuMicros() - sluiceBefore) / calls,
    postgresCpu: postgresCpuSince(postgresBefore) / calls,
  };
}

async function startReplica(mode: Mode, engineUrl: string, drops: Array<() => Promise<void>>): Promise<Replica> {
  const { url, drop } = await postgresSchema();
  drops.push(drop);
  const server = await startSluice(
    `request-log-${mode}`,
    { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'warn', DATABASE_URL: url },
    `models:\n  gpt-oss-120b: { backend: openai, base_url: "${engineUrl}" }\n${LOG_YAML[mode]}`,
  );
  const { key, projectId } = await server.newTenant(1_000_000);
  return { mode, server, key, projectId, databaseUrl: url };
}

/** Holds `LOCK TABLE request_log IN ACCESS EXCLUSIVE MODE` in an open transaction until released. */
async function lockLogTable(databaseUrl: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('lock table request_log in access exclusive mode');
  return {
    async release() {
      await client.query('commit');
      await client.end();
    },
  };
}

async function droppedMetric(server: SluiceProcess): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('sluice_request_log_dropped_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** One count on the replica's database for its project (`$1`). */
async function countOf(databaseUrl: string, query: string, projectId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(query, [projectId]);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

const SERVED = 'select count(*) as n from usage_records where project_id = $1';
const WRITTEN = 'select count(*) as n from request_log where project_id = $1';
/** Calls served and billed that have no entry in the log. */
const UNLOGGED = 'select count(*) as n from usage_records u where u.project_id = $1 and not exists (select 1 from request_log r where r.id = u.request_id)';

interface LogGap {
  /** Calls served (the project's usage records: autocannon does not count the answers still in flight when its time is up). */
  served: number;
  /** The project's entries in the log (a call the client left before it was billed has one, and no usage record). */
  written: number;
  /** Calls served that have no entry, and are not counted in the dropped metric. */
  unaccounted: number;
  dropped: number;
}

/** Once the writer has caught up (up to 15 s): what was served, written, and dropped since `droppedBefore`. */
async function logGap(replica: Replica, droppedBefore = 0): Promise<LogGap> {
  const served = await countOf(replica.databaseUrl, SERVED, replica.projectId);
  const until = Date.now() + 15_000;
  for (;;) {
    const written = await countOf(replica.databaseUrl, WRITTEN, replica.projectId);
    const dropped = (await droppedMetric(replica.server)) - droppedBefore;
    const unaccounted = (await countOf(replica.databaseUrl, UNLOGGED, replica.projectId)) - dropped;
    if (unaccounted <= 0 || Date.now() > until) return { served, written, unaccounted, dropped };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const percentLost = (rps: number, base: number) => (1 - rps / base) * 100;
const roundsNote = (xs: number[]) => `rounds ${xs.map((x) => x.toFixed(1)).join(', ')}`;

export default async function requestLogCostBench(): Promise<BenchRow[]> {
  if (!(await postgresReachable())) return [{ name: 'skipped', value: 0, unit: '', note: 'PostgreSQL is not reachable' }];
  const engine = await startZeroEngine();
  const drops: Array<() => Promise<void>> = [];
  const replicas: Replica[] = [];
  let lock: { release(): Promise<void> } | null = null;
  try {
    for (const mode of MODES) replicas.push(await startReplica(mode, engine.baseUrl, drops));
    for (const replica of replicas) await saturate(replica, WARMUP_SECONDS);
    // The stalled replica's calls from here on are a new project's, so its entries are counted apart from the warm-up's.
    const stalled = replicas.find((r) => r.mode === 'stalled')!;
    Object.assign(stalled, await stalled.server.newTenant(1_000_000));
    const droppedBefore = await droppedMetric(stalled.server);
    lock = await lockLogTable(stalled.databaseUrl);

    const phases = Object.fromEntries(MODES.map((m) => [m, [] as Phase[]])) as Record<Mode, Phase[]>;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? replicas : replicas.toReversed();
      for (const replica of order) phases[replica.mode].push(await saturate(replica, PHASE_SECONDS));
    }
    await lock.release();
    lock = null;
    const stalledGap = await logGap(stalled, droppedBefore);
    const [metadataGap, fullGap] = [await logGap(replicas[1]!), await logGap(replicas[2]!)];

    const rps = (mode: Mode) => median(phases[mode].map((p) => p.rps));
    const lost = (mode: Mode) => phases[mode].map((p, i) => percentLost(p.rps, phases.off[i]!.rps));
    const failed = (mode: Mode) => phases[mode].reduce((n, p) => n + p.failed, 0);
    const [metadataLost, fullLost, stalledLost] = [lost('metadata'), lost('full'), lost('stalled')];
    const cpu = (mode: Mode) => `Sluice ${median(phases[mode].map((p) => p.sluiceCpu)).toFixed(0)} µs, PostgreSQL ${median(phases[mode].map((p) => p.postgresCpu)).toFixed(0)} µs CPU per call`;
    const note = (mode: Mode) => `${CONNECTIONS} connections, ${ROUNDS} × ${PHASE_SECONDS} s; ${failed(mode)} failed; ${cpu(mode)}`;
    return [
      { name: 'request log off at saturation', value: rps('off'), unit: 'req/s', note: note('off') },
      { name: 'request log, metadata, at saturation', value: rps('metadata'), unit: 'req/s', note: note('metadata') },
      { name: 'request log, full bodies, at saturation', value: rps('full'), unit: 'req/s', note: note('full') },
      { name: 'request log, database stalled, at saturation', value: rps('stalled'), unit: 'req/s', note: note('stalled') },
      { name: 'req/s lost to metadata logging', value: median(metadataLost), unit: '%', note: `target ≤ 3%; per round against off, ${roundsNote(metadataLost)}` },
      { name: 'req/s lost to full bodies', value: median(fullLost), unit: '%', note: `target ≤ 15%; ${roundsNote(fullLost)}` },
      { name: 'req/s lost with the database stalled', value: median(stalledLost), unit: '%', note: roundsNote(stalledLost) },
      { name: 'calls failed with the database stalled', value: failed('stalled'), unit: 'calls', note: 'target 0' },
      { name: 'stalled: calls served', value: stalledGap.served, unit: 'calls', note: 'the project\'s usage records' },
      { name: 'stalled: entries written once the lock was released', value: stalledGap.written, unit: 'entries', note: `queue capped at ${STALL_MAX_QUEUE}` },
      { name: 'stalled: sluice_request_log_dropped_total', value: stalledGap.dropped, unit: 'entries' },
      { name: 'stalled: calls served, not logged and not counted dropped', value: stalledGap.unaccounted, unit: 'calls', note: 'target ≤ 0: the gap is all in the metric' },
      { name: 'dropped with the database well', value: metadataGap.dropped + fullGap.dropped, unit: 'entries', note: 'metadata + full replicas' },
      {
        name: 'database well: calls served, not logged and not counted dropped',
        value: Math.max(0, metadataGap.unaccounted) + Math.max(0, fullGap.unaccounted),
        unit: 'calls',
        note: `metadata ${metadataGap.served} served, ${metadataGap.written} written; full ${fullGap.served} served, ${fullGap.written} written; target 0`,
      },
    ];
  } finally {
    await lock?.release();
    for (const replica of replicas) await replica.server.stop();
    await engine.stop();
    for (const drop of drops) await drop();
  }
}

/**
 * Scale-out figures, each side of a ratio measured in the same run:
 *  - blobs: 100 MB streamed up and back down through the S3 store (s3rver on loopback)
 *    vs the local-disk store, with the process's peak RSS growth during the S3 upload
 *    (the upload streams in parts, so it stays far below 100 MB);
 *  - chat requests/s and p50 at saturation with PostgreSQL vs SQLite, each server and the
 *    zero-latency engine in its own process, as a user runs them (alternating rounds;
 *    target: PostgreSQL ≥ 0.8 of SQLite on one box). PostgreSQL runs twice: with usage
 *    commits synchronous (the default) and without (DATABASE_USAGE_SYNCHRONOUS_COMMIT=false,
 *    the durability of SQLite's synchronous=NORMAL, which the SQLite side runs), and a
 *    third time synchronous with its statements unprepared (DATABASE_PREPARED_STATEMENTS=false);
 *    each side's "server busy" row says whether the load saturated it, and its context
 *    switches per request why its CPU per request differs (its event loop sleeping for want
 *    of work, or taken off its core by the processes it shares the machine with);
 *  - batch lines/s with two workers vs one, on PostgreSQL and a shared S3 bucket;
 *  - the time one usage commit takes on PostgreSQL, synchronous and not (in this process).
 * The blob and batch figures run in this process (the batch upstream is the tests' fake,
 * answering after a fixed delay), so their absolute figures are for comparison only.
 */
import { Readable } from 'node:stream';
import type { BenchRow } from './run.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';
import pg from 'pg';
import { POSTGRES_URL, postgresReachable, postgresSchema, tempDir } from '../test/helpers/databases.js';
import { median } from './measure.js';
import { mainThreadContextSwitches, processCpuMicros } from './cpu-time.js';
import { load, startSluice, startZeroEngine, type LoadFigures, type SluiceProcess } from './processes.js';
import { startFakeS3, type FakeS3 } from '../test/helpers/s3-server.js';
import { usageRecord } from '../test/helpers/usage-records.js';
import { openDatabase } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';
import { ProjectsRepository } from '../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../src/storage/db/repositories/usage.repository.js';
import { newUuid } from '../src/domain/shared/ids.js';
import { startFakeUpstream, type FakeUpstream } from '../test/helpers/fake-upstream.js';
import { LocalDiskBlobStore } from '../src/storage/blobs/local-disk.js';
import { S3BlobStore } from '../src/storage/blobs/s3.js';
import type { BlobStore } from '../src/domain/files/blob-store.port.js';
import { MODEL, isTerminal, requestLines, startBatch, upstreamYaml, waitForBatch } from '../test/integration/batches/support/batch-helpers.js';

const MB = 1024 * 1024;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH_LINES = Number(process.env.BENCH_SCALE_LINES ?? 2000);

function hundredMegabytes(): Readable {
  const chunk = Buffer.alloc(MB, 120);
  return Readable.from((function* () {
    for (let i = 0; i < 100; i++) yield chunk;
  })());
}

async function roundTrip(store: BlobStore, key: string): Promise<{ upSeconds: number; downSeconds: number; rssGrowthMb: number }> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  let started = performance.now();
  await store.put(key, hundredMegabytes(), { maxBytes: 101 * MB });
  const upSeconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  started = performance.now();
  let bytes = 0;
  for await (const chunk of await store.get(key)) bytes += (chunk as Buffer).length;
  if (bytes !== 100 * MB) throw new Error(`read back ${bytes} bytes`);
  const downSeconds = (performance.now() - started) / 1000;
  await store.delete(key);
  return { upSeconds, downSeconds, rssGrowthMb: (peak - base) / MB };
}

async function blobRows(s3: FakeS3): Promise<BenchRow[]> {
  const local = new LocalDiskBlobStore(tempDir('sluice-bench-blobs-'));
  const remote = new S3BlobStore(s3.config('bench'));
  const disk = await roundTrip(local, 'bench/100mb.bin');
  const bucket = await roundTrip(remote, 'bench/100mb.bin');
  remote.close();
  return [
    { name: 'blobs: 100 MB upload, local disk', value: 100 / disk.upSeconds, unit: 'MB/s' },
    { name: 'blobs: 100 MB upload, S3 (s3rver)', value: 100 / bucket.upSeconds, unit: 'MB/s' },
    { name: 'blobs: upload S3 ÷ local disk', value: disk.upSeconds / bucket.upSeconds, unit: '×' },
    { name: 'blobs: 100 MB download, local disk', value: 100 / disk.downSeconds, unit: 'MB/s' },
    { name: 'blobs: 100 MB download, S3 (s3rver)', value: 100 / bucket.downSeconds, unit: 'MB/s' },
    { name: 'blobs: download S3 ÷ local disk', value: disk.downSeconds / bucket.downSeconds, unit: '×' },
    { name: 'blobs: peak RSS growth during the S3 upload', value: bucket.rssGrowthMb, unit: 'MB', note: 'the whole file would be 100 MB' },
  ];
}

const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 16);
const CHAT_BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });

interface ChatSide {
  label: string;
  server: SluiceProcess;
  key: string;
  /** The PostgreSQL backends serving it (by application_name), or null on SQLite. */
  backends: string | null;
}

interface ChatRound extends LoadFigures {
  /** The server process's CPU per answered request, µs. */
  cpuPerRequest: number;
  /** The same plus its PostgreSQL backends' CPU, µs. */
  allCpuPerRequest: number;
  /** The server process's CPU seconds per second of load: below 1, it waited for something else. */
  busyCores: number;
  /** Per answered request, how often the server's event loop slept for want of work (voluntary) and was taken off its core by another process (involuntary). */
  sleepsPerRequest: number;
  preemptionsPerRequest: number;
}

/** CPU (µs) the PostgreSQL backends of `applicationName` used so far (they run on this machine). */
async function backendCpuMicros(admin: pg.Client, applicationName: string | null): Promise<Map<number, number>> {
  if (applicationName === null) return new Map();
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [applicationName]);
  return new Map(rows.map((r) => [r.pid, processCpuMicros(r.pid)]));
}

async function chatRound(side: ChatSide, admin: pg.Client): Promise<ChatRound> {
  const cpuBefore = side.server.cpuMicros();
  const backendsBefore = await backendCpuMicros(admin, side.backends);
  const switchesBefore = mainThreadContextSwitches(side.server.pid);
  const figures = await load(`${side.server.baseUrl}/v1/chat/completions`, side.key, CHAT_BODY, { connections: CONNECTIONS, seconds: SECONDS });
  const requests = figures.rps * SECONDS;
  const cpu = side.server.cpuMicros() - cpuBefore;
  const switches = mainThreadContextSwitches(side.server.pid);
  let backends = 0;
  for (const [pid, micros] of await backendCpuMicros(admin, side.backends)) backends += micros - (backendsBefore.get(pid) ?? 0);
  return {
    ...figures,
    cpuPerRequest: cpu / requests,
    allCpuPerRequest: (cpu + backends) / requests,
    busyCores: cpu / (SECONDS * 1e6),
    sleepsPerRequest: (switches.voluntary - switchesBefore.voluntary) / requests,
    preemptionsPerRequest: (switches.involuntary - switchesBefore.involuntary) / requests,
  };
}

/** A PostgreSQL server for `label`: its own schema, its connections named for the CPU count. */
async function postgresSide(label: string, env: Record<string, string>, yaml: string, root: string | undefined, drops: Array<() => Promise<void>>): Promise<ChatSide> {
  const { url, drop } = await postgresSchema();
  drops.push(drop);
  // PostgreSQL keeps 63 bytes of an application_name: a longer one would match no backend.
  const backends = `sluice-bench-${label.replace(/\W+/g, '-')}`.slice(0, 63);
  const server = await startSluice(label, { ...env, DATABASE_URL: `${url}&application_name=${backends}` }, yaml, { root });
  return { label, server, key: (await server.newTenant(1_000_000)).key, backends };
}

/**
 * Chat at saturation against a zero-latency engine, each server (and the engine) in its
 * own process, as a user runs them. Rounds alternate the servers (rotating which goes
 * first), so drifting load from elsewhere weighs on both sides of each ratio alike. With
 * BENCH_BASELINE_DIR set to another checkout, its PostgreSQL server runs in the same
 * rotation: a before/after comparison in one session.
 */
async function chatRows(): Promise<BenchRow[]> {
  const engine = await startZeroEngine();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  const env = { RATE_LIMIT_RPM: '100000000', FREE_CREDITS_USD: '0' };
  const yaml = upstreamYaml(engine.baseUrl);
  const sides: ChatSide[] = [];
  const drops: Array<() => Promise<void>> = [];
  try {
    const sqlite = await startSluice('sqlite', env, yaml);
    sides.push({ label: 'SQLite', server: sqlite, key: (await sqlite.newTenant(1_000_000)).key, backends: null });
    sides.push(await postgresSide('PostgreSQL, usage commit synchronous', env, yaml, undefined, drops));
    sides.push(await postgresSide('PostgreSQL, usage commit asynchronous', { ...env, DATABASE_USAGE_SYNCHRONOUS_COMMIT: 'false' }, yaml, undefined, drops));
    // What preparing the repeated statements (storage/db/prepared-statements.ts) gives, in the same rounds.
    sides.push(await postgresSide('PostgreSQL, usage commit synchronous, statements unprepared', { ...env, DATABASE_PREPARED_STATEMENTS: 'false' }, yaml, undefined, drops));
    const baseline = process.env.BENCH_BASELINE_DIR;
    if (baseline) sides.push(await postgresSide('PostgreSQL (baseline)', env, yaml, baseline, drops));
    for (const side of sides) await chatRound(side, admin); // warm-up
    const rounds: ChatRound[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const figures: ChatRound[] = [];
      for (let i = 0; i < sides.length; i++) {
        const at = (i + round) % sides.length;
        figures[at] = await chatRound(sides[at]!, admin);
      }
      rounds.push(figures);
    }
    return chatFigures(sides, rounds);
  } finally {
    for (const side of sides) await side.server.stop();
    await engine.stop();
    await admin.end();
    for (const drop of drops) await drop();
  }
}

function chatFigures(sides: ChatSide[], rounds: ChatRound[][]): BenchRow[] {
  const note = `${CONNECTIONS} connections, zero-latency engine; median of ${ROUNDS} alternating rounds of ${SECONDS} s`;
  const of = (side: number, pick: (r: ChatRound) => number) => median(rounds.map((r) => pick(r[side]!)));
  const ratio = (a: number, b: number, target: string) => {
    const ratios = rounds.map((r) => r[a]!.rps / r[b]!.rps);
    return { name: `chat: ${sides[a]!.label} ÷ ${sides[b]!.label}`, value: median(ratios), unit: '×', note: `rounds ${ratios.map((x) => x.toFixed(3)).join(', ')}${target}` };
  };
  const rows: BenchRow[] = [];
  sides.forEach((side, i) => {
    rows.push({ name: `chat: ${side.label}`, value: of(i, (r) => r.rps), unit: 'req/s', note });
    rows.push({ name: `chat p50: ${side.label}`, value: of(i, (r) => r.p50), unit: 'ms' });
    rows.push({ name: `server CPU per request: ${side.label}`, value: of(i, (r) => r.cpuPerRequest), unit: 'µs', note: 'the server process, all threads' });
    // Whether the load saturated this server: a server that waits (on its database's commits) serves fewer requests per event-loop turn, each at a higher CPU cost.
    rows.push({ name: `server busy: ${side.label}`, value: of(i, (r) => r.busyCores), unit: 'cores', note: 'CPU seconds per second of load, all threads' });
    if (side.backends) rows.push({ name: `CPU per request with its PostgreSQL backends: ${side.label}`, value: of(i, (r) => r.allCpuPerRequest), unit: 'µs' });
    // Why a server's CPU per request rises: its event loop sleeping between waves of answers (each wake-up costs), and being taken off its core by the processes it shares the machine with.
    rows.push({ name: `event loop sleeps per request: ${side.label}`, value: of(i, (r) => r.sleepsPerRequest), unit: 'switches', note: 'voluntary context switches of the main thread' });
    rows.push({ name: `event loop preemptions per request: ${side.label}`, value: of(i, (r) => r.preemptionsPerRequest), unit: 'switches', note: 'involuntary context switches of the main thread' });
  });
  rows.push(ratio(1, 0, '; target ≥ 0.8'), ratio(2, 0, '; target ≥ 0.8'), ratio(1, 3, ''), ratio(3, 0, ''));
  if (sides.length > 4) rows.push(ratio(1, 4, ''), ratio(2, 4, ''));
  return rows;
}

const COMMITS = 200;

/**
 * What each answer waits for its usage commit, without the HTTP path around it: one
 * record and its debit at a time, with usage commits synchronous and not, alternating.
 */
async function usageCommitRows(): Promise<BenchRow[]> {
  const { url, drop } = await postgresSchema();
  const sides = [true, false].map((usageSynchronousCommit) => openDatabase({ kind: 'postgres', url, usageSynchronousCommit, preparedStatements: true }));
  try {
    await migrateToLatest(sides[0]!);
    const project = await new ProjectsRepository(sides[0]!).insert({ id: newUuid(), name: 'bench', balanceMicros: 1e12, createdAtMs: Date.now() });
    const repositories = sides.map((database) => new UsageRepository(database));
    const ms: number[][] = [[], []];
    for (let round = 0; round < ROUNDS * 2; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = performance.now();
        for (let n = 0; n < COMMITS; n++) await repositories[i]!.recordAndDebit(usageRecord(project.id));
        ms[i]!.push((performance.now() - started) / COMMITS);
      }
    }
    const note = `median of ${ROUNDS * 2} alternating rounds of ${COMMITS} commits, one at a time`;
    return [
      { name: 'usage commit: synchronous', value: median(ms[0]!), unit: 'ms', note },
      { name: 'usage commit: asynchronous', value: median(ms[1]!), unit: 'ms' },
    ];
  } finally {
    for (const database of sides) await database.close();
    await drop();
  }
}

async function batchSeconds(servers: TestServer[], key: string): Promise<number> {
  const started = performance.now();
  const { batch } = await startBatch(servers[0]!.baseUrl, key, requestLines(BATCH_LINES));
  const done = await waitForBatch(servers[0]!.baseUrl, key, batch.id, isTerminal, 600_000);
  if (done.request_counts.completed !== BATCH_LINES) throw new Error(`batch ended ${done.status} with ${JSON.stringify(done.request_counts)}`);
  return (performance.now() - started) / 1000;
}

async function workerRows(s3: FakeS3, upstream: FakeUpstream): Promise<BenchRow[]> {
  upstream.chat({ delayMs: 20 });
  const { url, drop } = await postgresSchema();
  const env = {
    DATABASE_URL: url,
    BLOB_URL: `s3://${s3.bucket}/workers?endpoint=${s3.endpoint}`,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    RATE_LIMIT_RPM: '100000',
  };
  const yaml = upstreamYaml(upstream.baseUrl, { global_concurrency: 8, per_batch_concurrency: 64, shard_lines: 100 });
  const one = await startTestServer({ env, yaml, startWorkers: true });
  const key = (await one.newTenant({ balanceUsd: 1000 })).key;
  try {
    const oneWorker = await batchSeconds([one], key);
    const two = await startTestServer({ env, yaml, startWorkers: true });
    try {
      const twoWorkers = await batchSeconds([one, two], key);
      return [
        { name: 'batch: 1 worker', value: BATCH_LINES / oneWorker, unit: 'lines/s', note: `${BATCH_LINES} lines, upstream 20 ms, 8 lines in flight per worker` },
        { name: 'batch: 2 workers', value: BATCH_LINES / twoWorkers, unit: 'lines/s' },
        { name: 'batch: 2 workers ÷ 1', value: oneWorker / twoWorkers, unit: '×' },
      ];
    } finally {
      await two.close();
    }
  } finally {
    await one.close();
    await drop();
  }
}

/** BENCH_SCALE_ONLY=chat runs only the usage-commit and chat rows (chatRows: BENCH_BASELINE_DIR, whose server runs with its own default). */
export default async function scaleBench(): Promise<BenchRow[]> {
  if (!(await postgresReachable())) throw new Error('the scale bench needs the PostgreSQL server (SLUICE_TEST_POSTGRES_URL)');
  if (process.env.BENCH_SCALE_ONLY === 'chat') return [...(await usageCommitRows()), ...(await chatRows())];
  const s3 = await startFakeS3();
  const upstream = await startFakeUpstream();
  try {
    return [...(await usageCommitRows()), ...(await chatRows()), ...(await blobRows(s3)), ...(await workerRows(s3, upstream))];
  } finally {
    await upstream.close();
    await s3.close();
  }
}

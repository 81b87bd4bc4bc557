/**
 * `npm run bench -- overhead [--write-docs]`: what a gateway adds to a call, measured as
 * the published gateway benchmarks that are easiest to check do it: a mock engine with a
 * fixed 60 ms latency (streamed and not), constant arrival rates from an open-loop load
 * generator, overhead = latency − 60 ms at p50/p95/p99, with the realistic feature set on.
 * Servers: Sluice (SQLite; and PostgreSQL when SLUICE_TEST_POSTGRES_URL's server answers),
 * the bare Fastify + undici proxy, Portkey's OSS gateway; each in its own process, and the
 * load generator in its own process. Per server and rate: overhead p50/p95/p99, the error
 * rate, the server's CPU per request (all its threads) and its RSS after the run; then a
 * saturation run (closed loops). A server that serves under 90% of a rate, or fails over
 * 1% of its calls, is not sent the higher rates. `--write-docs` regenerates
 * docs/performance.md and its chart from the run (overhead-report.ts).
 */
import { readFileSync } from 'node:fs';
import type { BenchRow } from './run.js';
import { postgresReachable, postgresSchema } from '../test/helpers/databases.js';
import { runLoad } from './overhead-load.js';
import { ENGINE_LATENCY_MS, startBareUnderTest, startMockEngine, startPortkeyUnderTest, startSluiceUnderTest, type ServerUnderTest } from './overhead-servers.js';
import { writeOverheadDocs, type OverheadPoint, type OverheadRun } from './overhead-report.js';

const RATES = (process.env.BENCH_OVERHEAD_RATES ?? '100,500,1000,2000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Closed loops of the saturation run (at 60 ms a call, 256 loops cap it near 4,000 req/s). */
const SATURATION_CONNECTIONS = Number(process.env.BENCH_OVERHEAD_CONNECTIONS ?? 256);
/** The open loop's connections: enough for every call of 2,000 req/s at 60 ms to be in flight at once, and a queue. */
const OPEN_LOOP_CONNECTIONS = 512;
const TIMEOUT_MS = 10_000;
const WARMUP_SECONDS = 2;

const bodyOf = (stream: boolean) =>
  JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

function rssMb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** One load against one server: `rate` requests/s open loop, or closed loops at saturation (rate 0). */
async function measure(server: ServerUnderTest, stream: boolean, rate: number): Promise<OverheadPoint> {
  const cpuBefore = server.process.cpuMicros();
  const outcome = await runLoad({
    url: server.url,
    headers: { 'content-type': 'application/json', ...server.headers },
    body: bodyOf(stream),
    rate,
    connections: rate > 0 ? OPEN_LOOP_CONNECTIONS : SATURATION_CONNECTIONS,
    seconds: SECONDS,
    timeoutMs: TIMEOUT_MS,
  });
  const cpu = server.process.cpuMicros() - cpuBefore;
  const sorted = outcome.latencies.sort((a, b) => a - b);
  const overhead = (p: number) => percentile(sorted, p) - ENGINE_LATENCY_MS;
  return {
    server: server.name,
    stream,
    rate,
    achievedRps: outcome.completed / outcome.elapsedSeconds,
    p50: overhead(0.5),
    p95: overhead(0.95),
    p99: overhead(0.99),
    errorRate: outcome.sent === 0 ? 1 : (outcome.non2xx + outcome.errors) / outcome.sent,
    cpuMicrosPerRequest: outcome.completed > 0 ? cpu / outcome.completed : NaN,
    rssMb: rssMb(server.process.pid),
  };
}

/** Every rate (while the server keeps up), then saturation, for one server and one body kind. */
async function sweep(server: ServerUnderTest, stream: boolean): Promise<OverheadPoint[]> {
  const points: OverheadPoint[] = [];
  await runLoad({ url: server.url, headers: { 'content-type': 'application/json', ...server.headers }, body: bodyOf(stream), rate: 100, connections: 64, seconds: WARMUP_SECONDS, timeoutMs: TIMEOUT_MS });
  for (const rate of RATES) {
    const point = await measure(server, stream, rate);
    points.push(point);
    console.log(describe(point));
    if (point.errorRate > 0.01 || point.achievedRps < 0.9 * rate) break;
  }
  const saturation = await measure(server, stream, 0);
  points.push(saturation);
  console.log(describe(saturation));
  return points;
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

function describe(p: OverheadPoint): string {
  const at = p.rate > 0 ? `${p.rate} req/s` : `saturation (${p.achievedRps.toFixed(0)} req/s)`;
  return (
    `${p.server}${p.stream ? ', streamed' : ''}, ${at}: overhead p50 ${p.p50.toFixed(2)} p95 ${p.p95.toFixed(2)} p99 ${p.p99.toFixed(2)} ms, ` +
    `errors ${(p.errorRate * 100).toFixed(2)}%, CPU ${p.cpuMicrosPerRequest.toFixed(0)} µs/req, RSS ${p.rssMb.toFixed(0)} MB (load ${loadAverage()})`
  );
}

export default async function overheadBench(): Promise<BenchRow[]> {
  const loadBefore = loadAverage();
  const engine = await startMockEngine();
  const drops: Array<() => Promise<void>> = [];
  const servers: ServerUnderTest[] = [];
  try {
    servers.push(await startSluiceUnderTest(engine.baseUrl), await startBareUnderTest(engine.baseUrl), await startPortkeyUnderTest(engine.baseUrl));
    if (await postgresReachable()) {
      const { url, drop } = await postgresSchema();
      drops.push(drop);
      servers.push(await startSluiceUnderTest(engine.baseUrl, url));
    }
    const points: OverheadPoint[] = [];
    for (const stream of [false, true]) for (const server of servers) points.push(...(await sweep(server, stream)));
    const run: OverheadRun = { points, rates: RATES, seconds: SECONDS, saturationConnections: SATURATION_CONNECTIONS, loadBefore, loadAfter: loadAverage() };
    if (process.argv.includes('--write-docs')) console.log(`wrote ${writeOverheadDocs(run).join(', ')}`);
    return points.map((p) => ({
      name: `${p.server}${p.stream ? ' streamed' : ''} ${p.rate > 0 ? `${p.rate} req/s` : 'saturation'}: overhead p50`,
      value: p.p50,
      unit: 'ms',
      note: `p95 ${p.p95.toFixed(2)}, p99 ${p.p99.toFixed(2)}, ${p.achievedRps.toFixed(0)} req/s, errors ${(p.errorRate * 100).toFixed(2)}%, ${p.cpuMicrosPerRequest.toFixed(0)} µs CPU/req, RSS ${p.rssMb.toFixed(0)} MB`,
    }));
  } finally {
    for (const server of servers) await server.process.stop();
    await engine.stop();
    for (const drop of drops) await drop();
  }
}

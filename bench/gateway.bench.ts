/**
 * The signed gateway's cost at saturation: `/gateway/v1/chat/completions` (signature
 * check, replay store, allowance check against a zero-latency fake intermediary, usage
 * record plus outbox rows, the settler reporting them) ÷ `/v1/chat/completions` (API key,
 * credit hold, usage record), requests/s in the same run, rounds alternating. Twice: with
 * every call asking the intermediary, and with allowance answers cached per agent
 * (`gateway.allowance_cache_ms`). The upstream, the fake intermediary and the load
 * generator each run in a worker thread; the generator signs every request itself (its own
 * gw-request-id, a current timestamp) before the phase's clock starts, so neither the
 * server's thread nor the two cores it shares carry the intermediary's signing.
 * BENCH_GATEWAY_CACHE_MS picks the cache settings to run; BENCH_VERBOSE prints each round.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { BenchRow } from './run.js';
import { median, startWorker } from './measure.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';
import { mainThreadCpuMicros } from './cpu-time.js';

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/**
 * Nine by default (the other benches take five): two 2-core neighbours share the host, and
 * single rounds of this ratio swing from 0.6 to above 1.2, so the median needs more of them.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CONNECTIONS = 32;
/** Allowance cache settings to run (ms; 0 = every call asks), e.g. BENCH_GATEWAY_CACHE_MS=2000 for one. */
const CACHE_SETTINGS = (process.env.BENCH_GATEWAY_CACHE_MS ?? '0,2000').split(',').map(Number);
const SECRET = 'gwsec_bench_0123456789abcdef';
const BODY = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16 });

/** A zero-latency OpenAI-compatible upstream and intermediary in one worker (plain JS). */
const PEERS_SOURCE = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const answer = JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const serve = (handler) => new Promise((resolve) => {
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(parts)));
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => resolve(server.address().port));
});
let checks = 0, reported = 0;
Promise.all([
  serve((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); }),
  serve((req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/v1/allowance/check') { checks++; res.end('{"allowed":true,"allowanceId":"alw_1"}'); return; }
    const n = JSON.parse(body.toString()).events.length;
    reported += n;
    res.end(JSON.stringify({ accepted: n, duplicates: 0 }));
  }),
]).then(([upstream, intermediary]) => parentPort.postMessage({ upstream, intermediary }));
parentPort.on('message', () => parentPort.postMessage({ checks, reported }));
`;

/** Closed loops on undici, signing each gateway request (plain JS, in a worker). */
const LOAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHmac, randomUUID } = require('node:crypto');
const { Pool } = require(workerData.undiciPath);
const { origin, path, body, key, secret, connections, seconds } = workerData;
const pool = new Pool(origin, { connections });
const bytes = Buffer.from(body);
let done = 0, failed = 0, agent = 0;
const sign = () => {
  const requestId = 'gwreq_' + randomUUID();
  const agentId = 'agt_' + (agent++ % 64);
  const t = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(t + '\\nPOST\\n' + path + '\\n'), bytes, Buffer.from('\\n' + requestId + '\\n' + agentId)])).digest('hex');
  return { 'content-type': 'application/json', 'gw-request-id': requestId, 'gw-agent-id': agentId, 'gw-signature': 't=' + t + ',kid=k1,v1=' + mac };
};
// Signed before the clock starts (an intermediary signs on its own machine): signing here,
// on the same two cores, would bill the gateway for the load generator's HMACs.
const presigned = secret ? Array.from({ length: seconds * 8000 }, sign) : [];
let next = 0;
const headersFor = () => {
  if (!secret) return { 'content-type': 'application/json', 'x-api-key': key };
  return next < presigned.length ? presigned[next++] : sign();
};
const started = performance.now();
const until = started + seconds * 1000;
const loop = async () => {
  while (performance.now() < until) {
    const res = await pool.request({ method: 'POST', path, headers: headersFor(), body: bytes });
    await res.body.text();
    if (res.statusCode === 200) done++; else failed++;
  }
};
Promise.all(Array.from({ length: connections }, loop)).then(async () => {
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  parentPort.postMessage({ rps: done / elapsed, failed });
});
`;
const UNDICI_PATH = createRequire(import.meta.url).resolve('undici');

/**
 * With BENCH_PROFILE_DIR set, a V8 CPU profile of the server's thread per load phase
 * (`<dir>/<n>-<path>-<requests>req.cpuprofile`, for Chrome DevTools or speedscope): how the gateway's
 * extra cost per request was found.
 */
let profiles = 0;
async function startProfile(): Promise<{ stop(path: string): Promise<void> } | undefined> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(path) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(`${dir}/${++profiles}-${path.replaceAll('/', '_')}.cpuprofile`, JSON.stringify(profile));
    },
  };
}

interface Load {
  rps: number;
  /** Server CPU per answered request, µs: steadier than req/s on a shared machine. */
  cpuPerRequest: number;
}

async function load(origin: string, path: string, auth: { key?: string; secret?: string }): Promise<Load> {
  const worker = startWorker<{ rps: number; failed: number }>(LOAD_SOURCE, { undiciPath: UNDICI_PATH, origin, path, body: BODY, key: auth.key, secret: auth.secret, connections: CONNECTIONS, seconds: PHASE_SECONDS });
  const profiler = await startProfile();
  const cpuBefore = mainThreadCpuMicros();
  const result = await worker.result;
  const cpu = mainThreadCpuMicros() - cpuBefore;
  await profiler?.stop(`${path}-${Math.round(result.rps * PHASE_SECONDS)}req`);
  await worker.stop();
  if (result.failed > 0) throw new Error(`${origin}${path}: ${result.failed} answers were not 200`);
  return { rps: result.rps, cpuPerRequest: cpu / (result.rps * PHASE_SECONDS) };
}

async function server(peers: { upstream: number; intermediary: number }, cacheMs: number): Promise<TestServer> {
  return startTestServer({
    env: {
      RATE_LIMIT_RPM: '1000000000',
      LOG_LEVEL: 'silent',
      GATEWAY_SIGNING_SECRETS: JSON.stringify({ k1: SECRET }),
      GATEWAY_API_URL: `http://127.0.0.1:${peers.intermediary}`,
      GATEWAY_READ_KEY: 'bench-read',
      GATEWAY_WRITE_KEY: 'bench-write',
    },
    yaml:
      `models:\n  gpt-oss-120b: { backend: openai, base_url: "http://127.0.0.1:${peers.upstream}/v1" }\n` +
      `gateway:\n  rate_limit_rpm: 1000000000\n  allowance_cache_ms: ${cacheMs}\n`,
    startWorkers: true,
  });
}

/** Alternating rounds of /v1 and the gateway on one server; the median of the per-round ratios. */
interface Comparison {
  v1: number;
  gateway: number;
  ratios: number[];
  cpu: { v1: number; gateway: number; ratios: number[] };
  /** Gateway requests answered, warm-up included (what the intermediary's counts are divided by). */
  gatewayRequests: number;
}

async function compare(sluice: TestServer): Promise<Comparison> {
  const { key } = await sluice.newTenant({ balanceUsd: 1_000_000 });
  const v1 = () => load(sluice.baseUrl, '/v1/chat/completions', { key });
  const gateway = () => load(sluice.baseUrl, '/gateway/v1/chat/completions', { secret: SECRET });
  await v1();
  const warmup = await gateway();
  const rounds = { v1: [] as Load[], gateway: [] as Load[] };
  for (let i = 0; i < ROUNDS; i++) {
    rounds.v1.push(await v1());
    rounds.gateway.push(await gateway());
    if (process.env.BENCH_VERBOSE) console.error(`round ${i + 1}: /v1 ${rounds.v1[i]!.rps.toFixed(0)} req/s ${rounds.v1[i]!.cpuPerRequest.toFixed(0)} µs, gateway ${rounds.gateway[i]!.rps.toFixed(0)} req/s ${rounds.gateway[i]!.cpuPerRequest.toFixed(0)} µs`);
  }
  const rps = (xs: Load[]) => xs.map((x) => x.rps);
  const cpu = (xs: Load[]) => xs.map((x) => x.cpuPerRequest);
  return {
    v1: median(rps(rounds.v1)),
    gateway: median(rps(rounds.gateway)),
    ratios: rounds.gateway.map((g, i) => g.rps / rounds.v1[i]!.rps),
    // The inverse of the CPU ratio is the throughput ratio where the server's core is the limit.
    cpu: { v1: median(cpu(rounds.v1)), gateway: median(cpu(rounds.gateway)), ratios: rounds.v1.map((v, i) => v.cpuPerRequest / rounds.gateway[i]!.cpuPerRequest) },
    gatewayRequests: [warmup, ...rounds.gateway].reduce((sum, x) => sum + x.rps * PHASE_SECONDS, 0),
  };
}

async function peerCounts(peersWorker: Worker): Promise<{ checks: number; reported: number }> {
  peersWorker.postMessage('counts');
  return new Promise((resolve) => peersWorker.once('message', resolve));
}

const roundsNote = (xs: number[]) => `median of rounds ${xs.map((x) => x.toFixed(3)).join(', ')}`;

export default async function gatewayBench(): Promise<BenchRow[]> {
  const peersWorker = new Worker(PEERS_SOURCE, { eval: true });
  const peers = await new Promise<{ upstream: number; intermediary: number }>((resolve) => peersWorker.once('message', resolve));
  const rows: BenchRow[] = [];
  try {
    for (const cacheMs of CACHE_SETTINGS) {
      const sluice = await server(peers, cacheMs);
      try {
        const before = await peerCounts(peersWorker);
        const result = await compare(sluice);
        const after = await peerCounts(peersWorker);
        const label = cacheMs === 0 ? 'every call checks its allowance' : `allowance cached ${cacheMs} ms per agent`;
        rows.push(
          { name: `/v1 chat at saturation (${label} run)`, value: result.v1, unit: 'req/s', note: `${CONNECTIONS} connections` },
          { name: `gateway chat at saturation, ${label}`, value: result.gateway, unit: 'req/s', note: 'signed, 64 agents' },
          { name: `gateway ÷ /v1, ${label}`, value: median(result.ratios), unit: 'ratio', note: `target ≥ 0.85; ${roundsNote(result.ratios)}` },
          { name: `server CPU per request, /v1 then gateway, ${label}`, value: result.cpu.v1, unit: 'µs', note: `gateway ${result.cpu.gateway.toFixed(0)} µs; main thread` },
          {
            name: `/v1 CPU ÷ gateway CPU per request, ${label}`,
            value: median(result.cpu.ratios),
            unit: 'ratio',
            note: `the throughput ratio when the server's core is the limit; ${roundsNote(result.cpu.ratios)}`,
          },
          {
            name: `allowance checks per gateway request, ${label}`,
            value: (after.checks - before.checks) / result.gatewayRequests,
            unit: 'ratio',
            note: `usage events reported per request ${((after.reported - before.reported) / result.gatewayRequests).toFixed(2)} (2 when every settlement went out)`,
          },
        );
      } finally {
        await sluice.close();
      }
    }
  } finally {
    await peersWorker.terminate();
  }
  return rows;
}

/**
 * What Sluice adds in front of an OpenAI-compatible upstream, on loopback:
 *  (a) at a fixed moderate rate (¼ of what the slower of the two proxies sustains in (b),
 *      requests evenly paced by an open-loop generator), p50 latency through Sluice minus
 *      p50 calling the upstream directly (target ≤ 1 ms); autocannon's per-second budget at
 *      the same rate is also reported, as a diagnostic;
 *  (b) at saturation, Sluice's full path (auth, credit check, validation, usage record)
 *      in requests/s as a ratio of a bare pass-through proxy on the same stack, Fastify +
 *      undici, written here (target ≥ 60%);
 *  (c) streaming: from the upstream writing its first chunk to that chunk's first byte at
 *      the client (target ≤ 1 ms), streams direct, via the bare proxy and via Sluice taking
 *      turns, the client in a worker; the median of 5 rounds of 100 each;
 *  (d) what Sluice adds for 8 function tools, at the rate of (a): the same tools and plain
 *      requests sent through Sluice and through the bare proxy in the same rounds, and
 *      (sluice tools − sluice plain) − (bare tools − bare plain) per round (target ≤ 0.1 ms):
 *      the client and the fake engine writing and parsing the larger body, and any proxy
 *      hop carrying it, cost both sides alike and cancel; what is left is Sluice's own work
 *      on the tools (validation, the input estimate, the body sent on);
 *  (e) where each proxy's CPU goes at the fixed rate, by step (auth, validation, hold,
 *      upstream call, settle, serialize, the HTTP server and framework, GC): one more paced
 *      run against a fresh process of each started with the V8 profiler on, its samples
 *      during that run given to steps by bench/cpu-steps.ts and scaled to the CPU per
 *      request measured without it.
 * Sluice (`dist`, as `npm start` runs it, LOG_LEVEL=warn: no access log, as the bare proxy
 * keeps none) and the bare proxy each run in their own process, as a user runs them; CPU
 * per request is their main thread's (the event loop, which bounds throughput). The
 * upstream and the load generators run in worker threads of the bench's process; latencies
 * use per-response timings (sub-millisecond), not autocannon's whole-millisecond histogram.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { BenchRow } from './run.js';
import { tempDir } from '../test/helpers/databases.js';
import { mainThreadProfile, monotonicMicros, samplesBetween, stepRows, type CpuProfile } from './cpu-steps.js';
import { startScript, startSluice, type BenchProcess } from './processes.js';
import { BODY, CONNECTIONS, TOOLS_BODY, alternating, load, type LoadResult } from './proxy-load.js';
import { CHAT_STREAM, firstByteGaps } from './first-byte.js';

export { BODY, TOOLS_BODY, load };

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/** Rounds alternate the proxies under test, so drifting load from elsewhere weighs on both sides of a ratio alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * The paced rounds (a, d): more of them, since (d) is a difference of four p50s, each of
 * which swings by more than the 0.1 ms it is held to; their order reverses every round.
 */
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 7);
/** The stream first-byte figure: rounds of this many streams per target. */
const FIRST_BYTE_ROUNDS = Number(process.env.BENCH_FIRST_BYTE_ROUNDS ?? 5);
const STREAMS_PER_ROUND = 100;

/** A minimal OpenAI-compatible upstream (plain JS, in a worker): fixed answers, and SSE that reports when it wrote its first chunk. */
const UPSTREAM_SOURCE = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const answer = JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const chunk = (delta, finish) => 'data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString() || '{}');
    if (!body.stream) { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    setTimeout(() => {
      res.write(chunk({ role: 'assistant', content: 'Hello' }, null));
      parentPort.postMessage({ id: req.headers['x-request-id'] || req.headers['x-bench-id'], at: performance.timeOrigin + performance.now() });
      setTimeout(() => {
        res.write(chunk({ content: ' there' }, null));
        res.write(chunk({}, 'stop'));
        res.write('data: ' + JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } }) + '\\n\\n');
        res.end('data: [DONE]\\n\\n');
      }, 2);
    }, 5);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

export interface Upstream {
  url: string;
  firstChunkAt: Map<string, number>;
  /**
   * When the upstream wrote request `id`'s first chunk. Its message can arrive after the
   * client has read the whole stream (a loaded machine schedules the worker late): wait for it.
   */
  firstChunkOf(id: string): Promise<number>;
  close(): Promise<number>;
}

export function startUpstream(): Promise<Upstream> {
  const worker = new Worker(UPSTREAM_SOURCE, { eval: true });
  const firstChunkAt = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  const firstChunkOf = (id: string) => {
    const at = firstChunkAt.get(id);
    return at !== undefined ? Promise.resolve(at) : new Promise<number>((resolve) => waiting.set(id, resolve));
  };
  return new Promise((resolve) => {
    worker.on('message', (message: { port?: number; id?: string; at?: number }) => {
      if (message.port) resolve({ url: `http://127.0.0.1:${message.port}`, firstChunkAt, firstChunkOf, close: () => worker.terminate() });
      else if (message.id) {
        firstChunkAt.set(message.id, message.at!);
        waiting.get(message.id)?.(message.at!);
        waiting.delete(message.id);
      }
    });
  });
}

/** The comparison point, in its own process: Fastify + undici, parse the request, forward it, send the upstream's body back. */
const BARE_PROXY_SOURCE = `
const Fastify = require(process.env.FASTIFY_PATH);
const { Pool } = require(process.env.UNDICI_PATH);
const pool = new Pool(process.env.UPSTREAM_URL, { connections: 256 });
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (request, reply) => {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    // The first-byte figure's stream id, which the upstream reports its first chunk under.
    headers: { 'content-type': 'application/json', ...(request.headers['x-bench-id'] ? { 'x-bench-id': request.headers['x-bench-id'] } : {}) },
    body: JSON.stringify(request.body),
  });
  // A stream is piped through as it arrives, so the first-byte figure can set Sluice beside this hop too.
  if (request.body.stream === true) return reply.code(res.statusCode).type('text/event-stream').send(res.body);
  return reply.code(res.statusCode).type('application/json').send(await res.body.text());
});
app.listen({ host: '127.0.0.1', port: 0 }).then(() => process.stdout.write('ready ' + app.server.address().port + '\\n'));
process.on('SIGTERM', () => app.close().then(() => pool.close()).then(() => process.exit(0)));
`;
const resolveHere = createRequire(import.meta.url).resolve;

export function startBareProxy(upstreamUrl: string, nodeFlags: string[] = []): Promise<BenchProcess> {
  return startScript('the bare proxy', BARE_PROXY_SOURCE, {
    env: { FASTIFY_PATH: resolveHere('fastify'), UNDICI_PATH: resolveHere('undici'), UPSTREAM_URL: upstreamUrl },
    nodeFlags,
  });
}

/** Sluice as a user runs it, before the upstream; with `profileDir`, under the V8 profiler. */
export async function startSluiceProxy(upstreamUrl: string, profileDir?: string): Promise<{ server: BenchProcess; key: string }> {
  const server = await startSluice(
    'proxy',
    { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'warn' },
    `models:\n  gpt-oss-120b: { backend: openai, base_url: "${upstreamUrl}/v1" }\n`,
    profileDir ? { profileDir, profileIntervalMicros: 100 } : {},
  );
  const { key } = await server.newTenant(100_000);
  return { server, key };
}

/**
 * The main thread's CPU profile of a fresh server process during one paced run at `rate`,
 * after a warm-up at saturation (a sample every 100 µs, over the thousands of requests of the run).
 */
async function stepProfile(start: (profileDir: string) => Promise<{ server: BenchProcess; key: string | null }>, rate: number): Promise<CpuProfile> {
  // With BENCH_PROFILE_DIR, the profiles stay there (for `tsx bench/cpu-steps.ts <file> <µs> --other`).
  const kept = process.env.BENCH_PROFILE_DIR;
  if (kept) mkdirSync(kept, { recursive: true });
  const dir = kept ? mkdtempSync(path.join(kept, 'proxy-steps-')) : tempDir('sluice-bench-profile-');
  try {
    const { server, key } = await start(dir);
    let from: number, to: number;
    try {
      await load(server.baseUrl, key, { seconds: 2 });
      from = monotonicMicros();
      await load(server.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true });
      to = monotonicMicros();
    } finally {
      await server.stop();
    }
    return samplesBetween(mainThreadProfile(dir), from, to);
  } finally {
    if (!kept) rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const roundsNote = (xs: number[]) => `median of rounds ${xs.map((x) => x.toFixed(3)).join(', ')}`;

/**
 * The 8-tools figure without queueing: at a fixed rate, the CPU the tools add raises the
 * server's utilisation and every request queues longer, so the paced difference measures
 * the queue as much as the request. Here each request is alone on the server (one
 * connection, one request at a time), and the plain and the tools body take turns request
 * by request, so both p50s of a round come from the same seconds; rounds alternate Sluice
 * and the bare proxy.
 */
async function toolsOneAtATime(sluiceUrl: string, key: string, bareUrl: string): Promise<{ throughSluice: number[]; added: number[] }> {
  const throughSluice: number[] = [];
  const added: number[] = [];
  const seconds = Number(process.env.BENCH_ONE_AT_A_TIME_SECONDS ?? 3);
  for (let i = 0; i < PACED_ROUNDS; i++) {
    const [plain, tools] = (await alternating(sluiceUrl, key, [BODY, TOOLS_BODY], seconds)) as [number, number];
    const [barePlain, bareTools] = (await alternating(bareUrl, null, [BODY, TOOLS_BODY], seconds)) as [number, number];
    throughSluice.push(tools - plain);
    added.push(tools - plain - (bareTools - barePlain));
  }
  return { throughSluice, added };
}

export default async function proxyBench(): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const bare = await startBareProxy(upstream.url);
  const { server: sluice, key } = await startSluiceProxy(upstream.url);
  const [sluiceCpu, bareCpu] = [sluice.mainThreadCpuMicros, bare.mainThreadCpuMicros];
  try {
    for (const [url, k] of [[upstream.url, null], [bare.baseUrl, null], [sluice.baseUrl, key]] as const) {
      await load(url, k, { seconds: 1 });
    }
    const saturated = { bare: [] as LoadResult[], sluice: [] as LoadResult[] };
    for (let i = 0; i < ROUNDS; i++) {
      saturated.bare.push(await load(bare.baseUrl, null, { seconds: PHASE_SECONDS }));
      saturated.sluice.push(await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS }));
    }
    const throughputRatios = saturated.sluice.map((r, i) => r.rps / saturated.bare[i]!.rps);
    const [bareSat, sluiceSat] = [saturated.bare, saturated.sluice].map((rs) => median(rs.map((r) => r.rps))) as [number, number];

    // A quarter of the slower proxy's saturation, so neither queues and the p50s measure the
    // hop. At a quarter of the bare proxy's, Sluice (half its throughput on a slow machine)
    // ran at half its own capacity while the load generator and the upstream shared the same
    // two cores, and its paced rounds swung from 0.5 to 230 ms: a queue, not a hop.
    const rate = Math.max(50, Math.round(Math.min(bareSat, sluiceSat) / 4));
    const phases = {
      direct: () => load(upstream.url, null, { seconds: PHASE_SECONDS, rate, paced: true }),
      bare: () => load(bare.baseUrl, null, { seconds: PHASE_SECONDS, rate, paced: true, cpuMicros: bareCpu }),
      sluice: () => load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true, cpuMicros: sluiceCpu }),
      bareTools: () => load(bare.baseUrl, null, { seconds: PHASE_SECONDS, rate, paced: true, body: TOOLS_BODY }),
      tools: () => load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true, body: TOOLS_BODY }),
    };
    const paced = Object.fromEntries(Object.keys(phases).map((name) => [name, [] as LoadResult[]])) as Record<keyof typeof phases, LoadResult[]>;
    for (let i = 0; i < PACED_ROUNDS; i++) {
      const order = Object.keys(phases) as Array<keyof typeof phases>;
      for (const name of i % 2 === 0 ? order : order.reverse()) paced[name].push(await phases[name]());
    }
    const added = paced.sluice.map((r, i) => r.p50 - paced.direct[i]!.p50);
    const addedOverBare = paced.sluice.map((r, i) => r.p50 - paced.bare[i]!.p50);
    const toolsThroughSluice = paced.tools.map((r, i) => r.p50 - paced.sluice[i]!.p50);
    const toolsThroughBare = paced.bareTools.map((r, i) => r.p50 - paced.bare[i]!.p50);
    const toolsAdded = toolsThroughSluice.map((d, i) => d - toolsThroughBare[i]!);
    const [direct, bareAtRate, through] = [paced.direct, paced.bare, paced.sluice].map((rs) => ({
      p50: median(rs.map((r) => r.p50)),
      cpuPerRequest: median(rs.map((r) => r.cpuPerRequest)),
    })) as [Pick<LoadResult, 'p50' | 'cpuPerRequest'>, Pick<LoadResult, 'p50' | 'cpuPerRequest'>, Pick<LoadResult, 'p50' | 'cpuPerRequest'>];
    // The same rate as autocannon's per-second budget (bursts of 8 closed-loop connections).
    const directBursts = await load(upstream.url, null, { seconds: PHASE_SECONDS, rate });
    const throughBursts = await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate });

    const oneAtATime = await toolsOneAtATime(sluice.baseUrl, key, bare.baseUrl);

    // One more paced run of each proxy with the profiler on: where the CPU goes, by step (bench/cpu-steps.ts).
    const sluiceSteps = await stepProfile((dir) => startSluiceProxy(upstream.url, dir), rate);
    const bareSteps = await stepProfile(async (dir) => ({ server: await startBareProxy(upstream.url, ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${dir}`]), key: null }), rate);

    // The stream path warmed at saturation first, on both proxies alike: the warm-up above sent
    // no stream, and a server that streams all day runs that code optimised. Without it the
    // first rounds measure V8 tiering up (round figures fell 1.09 → 0.91 ms across five rounds).
    for (const [url, k] of [[bare.baseUrl, null], [sluice.baseUrl, key]] as const) await load(url, k, { seconds: 2, body: CHAT_STREAM });
    // Rounds of streams, the three targets taking turns stream by stream within each: a figure per round, and the median of the rounds.
    const firstByte = { direct: [] as number[], bare: [] as number[], sluice: [] as number[] };
    for (let i = 0; i < FIRST_BYTE_ROUNDS; i++) {
      const gaps = (await firstByteGaps([{ url: upstream.url, key: null }, { url: bare.baseUrl, key: null }, { url: sluice.baseUrl, key }], upstream, STREAMS_PER_ROUND)).map(median) as [number, number, number];
      firstByte.direct.push(gaps[0]);
      firstByte.bare.push(gaps[1]);
      firstByte.sluice.push(gaps[2]);
    }
    const sluiceHop = firstByte.sluice.map((x, i) => x - firstByte.direct[i]!);
    const bareHop = firstByte.bare.map((x, i) => x - firstByte.direct[i]!);

    return [
      { name: 'bare proxy at saturation', value: bareSat, unit: 'req/s', note: `Fastify + undici, ${CONNECTIONS} connections` },
      { name: 'sluice full path at saturation', value: sluiceSat, unit: 'req/s', note: 'auth, credit check, validation, upstream, usage record' },
      { name: 'sluice / bare proxy throughput', value: median(throughputRatios), unit: 'ratio', note: `target ≥ 0.60; ${roundsNote(throughputRatios)}` },
      { name: `p50 direct to upstream at a fixed ${rate} req/s`, value: direct.p50, unit: 'ms', note: 'open loop, evenly paced' },
      { name: `p50 through the bare proxy at ${rate} req/s`, value: bareAtRate.p50, unit: 'ms', note: 'the floor for any proxy hop' },
      { name: `p50 through sluice at ${rate} req/s`, value: through.p50, unit: 'ms' },
      { name: 'p50 latency added by sluice', value: median(added), unit: 'ms', note: `target ≤ 1 ms; ${roundsNote(added)}` },
      { name: 'p50 latency added by sluice over the bare proxy', value: median(addedOverBare), unit: 'ms', note: roundsNote(addedOverBare) },
      { name: `p50 through sluice with 8 tools at ${rate} req/s`, value: median(paced.tools.map((r) => r.p50)), unit: 'ms', note: `${TOOLS_BODY.length} bytes against ${BODY.length}` },
      { name: `p50 through the bare proxy with 8 tools at ${rate} req/s`, value: median(paced.bareTools.map((r) => r.p50)), unit: 'ms' },
      { name: '8 tools − plain through sluice', value: median(toolsThroughSluice), unit: 'ms', note: `raw; ${roundsNote(toolsThroughSluice)}` },
      { name: '8 tools − plain through the bare proxy', value: median(toolsThroughBare), unit: 'ms', note: `raw; ${roundsNote(toolsThroughBare)}` },
      {
        name: 'p50 sluice adds for 8 tools',
        value: median(toolsAdded),
        unit: 'ms',
        note: `(sluice tools − plain) − (bare tools − plain), per round; target ≤ 0.1 ms; ${roundsNote(toolsAdded)}`,
      },
      {
        name: '8 tools − plain through sluice, one request at a time',
        value: median(oneAtATime.throughSluice),
        unit: 'ms',
        note: `raw, no queueing; ${roundsNote(oneAtATime.throughSluice)}`,
      },
      {
        name: 'p50 sluice adds for 8 tools, one request at a time',
        value: median(oneAtATime.added),
        unit: 'ms',
        note: `(sluice tools − plain) − (bare tools − plain), per round; target ≤ 0.1 ms; ${roundsNote(oneAtATime.added)}`,
      },
      {
        name: `p50 added in autocannon's bursts (its ${rate} req/s budget spent by 8 connections at full speed)`,
        value: throughBursts.p50 - directBursts.p50,
        unit: 'ms',
        note: `${throughBursts.p50.toFixed(3)} − ${directBursts.p50.toFixed(3)} ms; diagnostic`,
      },
      { name: `server CPU per request at ${rate} req/s, bare proxy`, value: bareAtRate.cpuPerRequest, unit: 'µs', note: 'its process\'s main thread' },
      { name: `server CPU per request at ${rate} req/s, sluice`, value: through.cpuPerRequest, unit: 'µs', note: 'its process\'s main thread' },
      { name: 'sluice / bare proxy CPU per request', value: through.cpuPerRequest / bareAtRate.cpuPerRequest, unit: 'ratio', note: 'inverse is the throughput ceiling on one core' },
      ...stepRows(`server CPU per request at ${rate} req/s by step, sluice`, [
        { name: 'sluice', profile: sluiceSteps, cpuPerRequest: through.cpuPerRequest },
        { name: 'bare proxy', profile: bareSteps, cpuPerRequest: bareAtRate.cpuPerRequest },
      ]),
      { name: 'stream first byte after upstream first chunk, direct', value: median(firstByte.direct), unit: 'ms', note: `median of ${FIRST_BYTE_ROUNDS} rounds' p50 of ${STREAMS_PER_ROUND}` },
      { name: 'stream first byte after upstream first chunk, via sluice', value: median(firstByte.sluice), unit: 'ms', note: `the same; target ≤ 1 ms` },
      { name: 'stream first byte added by sluice', value: median(sluiceHop), unit: 'ms', note: `via sluice − direct per round, streams taking turns; goal ≤ 0.4 ms; ${roundsNote(sluiceHop)}` },
      {
        name: 'stream first byte added by the bare proxy',
        value: median(bareHop),
        unit: 'ms',
        note: `piping the stream as it arrives: what any proxy hop costs here (a thread woken twice instead of once); ${roundsNote(bareHop)}`,
      },
    ];
  } finally {
    await sluice.stop();
    await bare.stop();
    await upstream.close();
  }
}

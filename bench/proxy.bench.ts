/**
 * What Sluice adds in front of an OpenAI-compatible upstream, on loopback:
 *  (a) at a fixed moderate rate (¼ of what a bare proxy sustains, requests evenly paced by
 *      an open-loop generator), p50 latency through Sluice minus p50 calling the upstream
 *      directly (target ≤ 1 ms); autocannon's per-second budget at the same rate is also
 *      reported, as a diagnostic;
 *  (b) at saturation, Sluice's full path (auth, credit check, validation, usage record)
 *      in requests/s as a ratio of a bare pass-through proxy on the same stack, Fastify +
 *      undici, written here (target ≥ 60%);
 *  (c) streaming: from the upstream writing its first chunk to that chunk's first byte at
 *      the client (target ≤ 1 ms);
 *  (d) the same request with 8 function tools, at the rate of (a): its p50 minus the plain
 *      request's through Sluice, round by round (target ≤ 0.1 ms);
 *  (e) where each proxy's CPU goes at the fixed rate, by step (auth, validation, hold,
 *      upstream call, settle, serialize, the HTTP server and framework, GC): one more paced
 *      run of each with the V8 profiler on, its samples given to steps by bench/cpu-steps.ts
 *      and scaled to the CPU per request measured without it.
 * The upstream and the load generator (autocannon) each run in a worker thread, so the
 * main event loop carries only the server under test; latencies use autocannon's
 * per-response timings (sub-millisecond), not its whole-millisecond histogram.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { startTestServer } from '../test/helpers/harness.js';
import { profiled, stepRows } from './cpu-steps.js';

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/** Rounds alternate the proxies under test, so drifting load from elsewhere weighs on both sides of a ratio alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 32;
export const BODY = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16 });
/** BODY with 8 function tools (each with a small JSON Schema), as an agent framework sends them. */
export const TOOLS_BODY = JSON.stringify({
  ...JSON.parse(BODY),
  tools: Array.from({ length: 8 }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: `Looks up fact number ${i} about a city`,
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'The city' }, units: { type: 'string', enum: ['metric', 'imperial'] } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  })),
  tool_choice: 'auto',
});

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
  close(): Promise<number>;
}

export function startUpstream(): Promise<Upstream> {
  const worker = new Worker(UPSTREAM_SOURCE, { eval: true });
  const firstChunkAt = new Map<string, number>();
  return new Promise((resolve) => {
    worker.on('message', (message: { port?: number; id?: string; at?: number }) => {
      if (message.port) resolve({ url: `http://127.0.0.1:${message.port}`, firstChunkAt, close: () => worker.terminate() });
      else if (message.id) firstChunkAt.set(message.id, message.at!);
    });
  });
}

/** The comparison point: Fastify + undici, parse the request, forward it, send the upstream's body back. */
async function startBareProxy(upstreamUrl: string) {
  const pool = new Pool(upstreamUrl, { connections: 256 });
  const app = Fastify({ logger: false });
  app.post('/v1/chat/completions', async (request, reply) => {
    const res = await pool.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request.body),
    });
    return reply.code(res.statusCode).type('application/json').send(await res.body.text());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: async () => (await app.close(), await pool.close()) };
}

/**
 * CPU time (µs) of the main thread, which carries only the server under test (the
 * upstream and the load generator run in workers): per-request CPU is steadier than
 * req/s on a shared machine. Linux /proc (10 ms ticks, fine over thousands of requests);
 * elsewhere the event loop's active time, which is close to it when the loop is not saturated.
 */
function mainThreadCpuMicros(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, at USER_HZ = 100
  } catch {
    return performance.eventLoopUtilization().active * 1000;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const roundsNote = (xs: number[]) => `median of rounds ${xs.map((x) => x.toFixed(3)).join(', ')}`;

export interface LoadResult {
  rps: number;
  p50: number;
  cpuPerRequest: number;
}

/**
 * autocannon in its own worker thread (so the server's event loop carries only the
 * server), collecting each 200 response's time (sub-millisecond) for the p50. Inside a
 * worker autocannon returns raw counts, so requests/s is computed here.
 */
const LOAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const autocannon = require(workerData.autocannonPath);
const latencies = [];
const instance = autocannon(workerData.options, (err, result) => parentPort.postMessage(err
  ? { error: String(err) }
  : { rps: result.totalCompletedRequests / result.duration, count: result.totalCompletedRequests, non2xx: result.non2xx, errors: result.errors, latencies }));
instance.on('response', (_client, status, _bytes, ms) => { if (status === 200) latencies.push(ms); });
`;
const AUTOCANNON_PATH = createRequire(import.meta.url).resolve('autocannon');

/**
 * A fixed rate, as (a) asks: autocannon's overallRate is a budget per second, which its
 * connections spend at full speed, so its "¼ rate" is a closed-loop burst of 8 connections
 * for the first part of every second and idle for the rest. This generator (open loop,
 * in its own worker, on undici) sends request i at start + i/rate, a few per millisecond
 * timer tick, whatever is still outstanding; each latency runs from sending to the last
 * byte of the answer.
 */
const PACED_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Pool } = require(workerData.undiciPath);
const { url, headers, body, rate, seconds } = workerData;
const target = new URL(url);
const pool = new Pool(target.origin, { connections: 64 });
const latencies = [];
let sent = 0, settled = 0, non2xx = 0, errors = 0;
const interval = 1000 / rate;
const total = Math.round(rate * seconds);
const start = performance.now();
const fire = () => {
  const at = performance.now();
  pool.request({ method: 'POST', path: target.pathname, headers, body }).then(
    async (res) => { await res.body.text(); if (res.statusCode === 200) latencies.push(performance.now() - at); else non2xx++; },
    () => { errors++; },
  ).finally(() => { if (++settled === total) finish(); });
  sent++;
};
const finish = () => pool.close().then(() => parentPort.postMessage({ rps: total / seconds, count: total, non2xx, errors, latencies }));
const tick = () => {
  const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
  while (sent < due) fire();
  if (sent < total) setTimeout(tick, 1);
};
tick();
`;
const UNDICI_PATH = createRequire(import.meta.url).resolve('undici');

export async function load(url: string, key: string | null, options: { seconds: number; rate?: number; paced?: boolean; body?: string }): Promise<LoadResult> {
  const body = options.body ?? BODY;
  const headers = { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) };
  const paced = options.paced && options.rate;
  const worker = paced
    ? new Worker(PACED_SOURCE, {
        eval: true,
        workerData: { undiciPath: UNDICI_PATH, url: `${url}/v1/chat/completions`, headers, body, rate: options.rate, seconds: options.seconds },
      })
    : new Worker(LOAD_SOURCE, {
        eval: true,
        workerData: {
          autocannonPath: AUTOCANNON_PATH,
          options: {
            url: `${url}/v1/chat/completions`,
            method: 'POST',
            headers,
            body,
            connections: options.rate ? 8 : CONNECTIONS,
            duration: options.seconds,
            ...(options.rate ? { overallRate: options.rate } : {}),
          },
        },
      });
  const cpuBefore = mainThreadCpuMicros();
  const result = await new Promise<{ error?: string; rps: number; count: number; non2xx: number; errors: number; latencies: number[] }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const cpuMicros = mainThreadCpuMicros() - cpuBefore;
  await worker.terminate();
  if (result.error) throw new Error(result.error);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.rps, p50: median(result.latencies), cpuPerRequest: cpuMicros / result.count };
}

/** Sequential streams: client first byte minus the upstream's first-chunk write, per request. */
async function firstByteGaps(url: string, key: string | null, upstream: Upstream, count: number): Promise<number[]> {
  const gaps: number[] = [];
  const agent = new http.Agent({ keepAlive: true });
  for (let i = 0; i < count; i++) {
    const benchId = `bench-${i}`;
    const gap = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${url}/v1/chat/completions`, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'x-bench-id': benchId, ...(key ? { 'x-api-key': key } : {}) },
      });
      request.on('response', (res) => {
        const id = (res.headers['x-request-id'] as string | undefined) ?? benchId;
        let first = 0;
        res.on('data', () => {
          first ||= performance.timeOrigin + performance.now();
        });
        res.on('end', () => resolve(first - upstream.firstChunkAt.get(id)!));
      });
      request.on('error', reject);
      request.end(JSON.stringify({ ...JSON.parse(BODY), stream: true }));
    });
    gaps.push(gap);
  }
  agent.destroy();
  return gaps;
}

export default async function proxyBench(): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const bare = await startBareProxy(upstream.url);
  const sluice = await startTestServer({
    env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' },
    yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "${upstream.url}/v1" }\n`,
  });
  const { key } = await sluice.newTenant({ balanceUsd: 100_000 });
  try {
    for (const [url, k] of [[upstream.url, null], [bare.url, null], [sluice.baseUrl, key]] as const) {
      await load(url, k, { seconds: 1 });
    }
    const saturated = { bare: [] as LoadResult[], sluice: [] as LoadResult[] };
    for (let i = 0; i < ROUNDS; i++) {
      saturated.bare.push(await load(bare.url, null, { seconds: PHASE_SECONDS }));
      saturated.sluice.push(await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS }));
    }
    const throughputRatios = saturated.sluice.map((r, i) => r.rps / saturated.bare[i]!.rps);
    const [bareSat, sluiceSat] = [saturated.bare, saturated.sluice].map((rs) => median(rs.map((r) => r.rps))) as [number, number];

    const rate = Math.max(50, Math.round(bareSat / 4));
    const paced = { direct: [] as LoadResult[], bare: [] as LoadResult[], sluice: [] as LoadResult[], tools: [] as LoadResult[] };
    for (let i = 0; i < ROUNDS; i++) {
      paced.direct.push(await load(upstream.url, null, { seconds: PHASE_SECONDS, rate, paced: true }));
      paced.bare.push(await load(bare.url, null, { seconds: PHASE_SECONDS, rate, paced: true }));
      paced.sluice.push(await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true }));
      paced.tools.push(await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true, body: TOOLS_BODY }));
    }
    const added = paced.sluice.map((r, i) => r.p50 - paced.direct[i]!.p50);
    const toolsAdded = paced.tools.map((r, i) => r.p50 - paced.sluice[i]!.p50);
    const [direct, bareAtRate, through] = [paced.direct, paced.bare, paced.sluice].map((rs) => ({
      p50: median(rs.map((r) => r.p50)),
      cpuPerRequest: median(rs.map((r) => r.cpuPerRequest)),
    })) as [Pick<LoadResult, 'p50' | 'cpuPerRequest'>, Pick<LoadResult, 'p50' | 'cpuPerRequest'>, Pick<LoadResult, 'p50' | 'cpuPerRequest'>];
    // The same rate as autocannon's per-second budget (bursts of 8 closed-loop connections).
    const directBursts = await load(upstream.url, null, { seconds: PHASE_SECONDS, rate });
    const throughBursts = await load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate });

    // One more paced run of each proxy with the profiler on: where the CPU goes, by step (bench/cpu-steps.ts).
    const [sluiceSteps, bareSteps] = [await profiled(() => load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true })), await profiled(() => load(bare.url, null, { seconds: PHASE_SECONDS, rate, paced: true }))];

    const directGaps = await firstByteGaps(upstream.url, null, upstream, 200);
    const sluiceGaps = await firstByteGaps(sluice.baseUrl, key, upstream, 200);

    return [
      { name: 'bare proxy at saturation', value: bareSat, unit: 'req/s', note: `Fastify + undici, ${CONNECTIONS} connections` },
      { name: 'sluice full path at saturation', value: sluiceSat, unit: 'req/s', note: 'auth, credit check, validation, upstream, usage record' },
      { name: 'sluice / bare proxy throughput', value: median(throughputRatios), unit: 'ratio', note: `target ≥ 0.60; ${roundsNote(throughputRatios)}` },
      { name: `p50 direct to upstream at a fixed ${rate} req/s`, value: direct.p50, unit: 'ms', note: 'open loop, evenly paced' },
      { name: `p50 through the bare proxy at ${rate} req/s`, value: bareAtRate.p50, unit: 'ms', note: 'the floor for any proxy hop' },
      { name: `p50 through sluice at ${rate} req/s`, value: through.p50, unit: 'ms' },
      { name: 'p50 latency added by sluice', value: median(added), unit: 'ms', note: `target ≤ 1 ms; ${roundsNote(added)}` },
      { name: `p50 through sluice with 8 tools at ${rate} req/s`, value: median(paced.tools.map((r) => r.p50)), unit: 'ms', note: `${TOOLS_BODY.length} bytes against ${BODY.length}` },
      { name: 'p50 added by 8 tools', value: median(toolsAdded), unit: 'ms', note: `target ≤ 0.1 ms; ${roundsNote(toolsAdded)}` },
      {
        name: `p50 added in autocannon's bursts (its ${rate} req/s budget spent by 8 connections at full speed)`,
        value: throughBursts.p50 - directBursts.p50,
        unit: 'ms',
        note: `${throughBursts.p50.toFixed(3)} − ${directBursts.p50.toFixed(3)} ms; diagnostic`,
      },
      { name: `server CPU per request at ${rate} req/s, bare proxy`, value: bareAtRate.cpuPerRequest, unit: 'µs', note: 'main thread' },
      { name: `server CPU per request at ${rate} req/s, sluice`, value: through.cpuPerRequest, unit: 'µs', note: 'main thread' },
      { name: 'sluice / bare proxy CPU per request', value: through.cpuPerRequest / bareAtRate.cpuPerRequest, unit: 'ratio', note: 'inverse is the throughput ceiling on one core' },
      ...stepRows(`server CPU per request at ${rate} req/s by step, sluice`, [
        { name: 'sluice', profile: sluiceSteps.profile, cpuPerRequest: through.cpuPerRequest },
        { name: 'bare proxy', profile: bareSteps.profile, cpuPerRequest: bareAtRate.cpuPerRequest },
      ]),
      { name: 'stream first byte after upstream first chunk, direct', value: median(directGaps), unit: 'ms', note: 'p50 of 200' },
      { name: 'stream first byte after upstream first chunk, via sluice', value: median(sluiceGaps), unit: 'ms', note: 'p50 of 200; target ≤ 1 ms' },
    ];
  } finally {
    await sluice.close();
    await bare.close();
    await upstream.close();
  }
}

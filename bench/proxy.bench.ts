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
 *      the client (target ≤ 1 ms), streams direct and via Sluice taking turns, the client
 *      in a worker;
 *  (d) what Sluice adds for 8 function tools, at the rate of (a): the same tools and plain
 *      requests sent through Sluice and through the bare proxy in the same rounds, and
 *      (sluice tools − sluice plain) − (bare tools − bare plain) per round (target ≤ 0.1 ms):
 *      the client and the fake engine writing and parsing the larger body, and any proxy
 *      hop carrying it, cost both sides alike and cancel; what is left is Sluice's own work
 *      on the tools (validation, the input estimate, the body sent on);
 *  (e) where each proxy's CPU goes at the fixed rate, by step (auth, validation, hold,
 *      upstream call, settle, serialize, the HTTP server and framework, GC): one more paced
 *      run of each with the V8 profiler on, its samples given to steps by bench/cpu-steps.ts
 *      and scaled to the CPU per request measured without it.
 * The upstream and the load generator (autocannon) each run in a worker thread, so the
 * main event loop carries only the server under test; latencies use autocannon's
 * per-response timings (sub-millisecond), not its whole-millisecond histogram.
 */
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { startTestServer } from '../test/helpers/harness.js';
import { profiled, stepRows } from './cpu-steps.js';
import { BODY, CONNECTIONS, TOOLS_BODY, alternating, load, type LoadResult } from './proxy-load.js';
import { firstByteGaps } from './first-byte.js';

export { BODY, TOOLS_BODY, load };

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/** Rounds alternate the proxies under test, so drifting load from elsewhere weighs on both sides of a ratio alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * The paced rounds (a, d): more of them, since (d) is a difference of four p50s, each of
 * which swings by more than the 0.1 ms it is held to; their order reverses every round.
 */
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 7);

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

/** The comparison point: Fastify + undici, parse the request, forward it, send the upstream's body back. */
export async function startBareProxy(upstreamUrl: string) {
  const pool = new Pool(upstreamUrl, { connections: 256 });
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
    if ((request.body as { stream?: unknown }).stream === true) return reply.code(res.statusCode).type('text/event-stream').send(res.body);
    return reply.code(res.statusCode).type('application/json').send(await res.body.text());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: async () => (await app.close(), await pool.close()) };
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
    const phases = {
      direct: () => load(upstream.url, null, { seconds: PHASE_SECONDS, rate, paced: true }),
      bare: () => load(bare.url, null, { seconds: PHASE_SECONDS, rate, paced: true }),
      sluice: () => load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true }),
      bareTools: () => load(bare.url, null, { seconds: PHASE_SECONDS, rate, paced: true, body: TOOLS_BODY }),
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

    const oneAtATime = await toolsOneAtATime(sluice.baseUrl, key, bare.url);

    // One more paced run of each proxy with the profiler on: where the CPU goes, by step (bench/cpu-steps.ts).
    const [sluiceSteps, bareSteps] = [await profiled(() => load(sluice.baseUrl, key, { seconds: PHASE_SECONDS, rate, paced: true })), await profiled(() => load(bare.url, null, { seconds: PHASE_SECONDS, rate, paced: true }))];

    const [directGaps, bareGaps, sluiceGaps] = (await firstByteGaps(
      [{ url: upstream.url, key: null }, { url: bare.url, key: null }, { url: sluice.baseUrl, key }],
      upstream,
      200,
    )) as [number[], number[], number[]];

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
      { name: `server CPU per request at ${rate} req/s, bare proxy`, value: bareAtRate.cpuPerRequest, unit: 'µs', note: 'main thread' },
      { name: `server CPU per request at ${rate} req/s, sluice`, value: through.cpuPerRequest, unit: 'µs', note: 'main thread' },
      { name: 'sluice / bare proxy CPU per request', value: through.cpuPerRequest / bareAtRate.cpuPerRequest, unit: 'ratio', note: 'inverse is the throughput ceiling on one core' },
      ...stepRows(`server CPU per request at ${rate} req/s by step, sluice`, [
        { name: 'sluice', profile: sluiceSteps.profile, cpuPerRequest: through.cpuPerRequest },
        { name: 'bare proxy', profile: bareSteps.profile, cpuPerRequest: bareAtRate.cpuPerRequest },
      ]),
      { name: 'stream first byte after upstream first chunk, direct', value: median(directGaps), unit: 'ms', note: 'p50 of 200' },
      { name: 'stream first byte after upstream first chunk, via sluice', value: median(sluiceGaps), unit: 'ms', note: 'p50 of 200; target ≤ 1 ms' },
      { name: 'stream first byte added by sluice', value: median(sluiceGaps) - median(directGaps), unit: 'ms', note: 'via sluice − direct, streams taking turns; goal ≤ 0.4 ms' },
      {
        name: 'stream first byte added by the bare proxy',
        value: median(bareGaps) - median(directGaps),
        unit: 'ms',
        note: 'piping the stream as it arrives: what any proxy hop costs here (a thread woken twice instead of once)',
      },
    ];
  } finally {
    await sluice.close();
    await bare.close();
    await upstream.close();
  }
}

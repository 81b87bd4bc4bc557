/**
 * The load the proxy bench and the benches built on it put on a server: the request bodies
 * (plain and with 8 tools), autocannon's closed loops and an open-loop paced generator,
 * each in a worker thread, and the CPU the server under test spent: the main thread of its
 * own process (`cpuMicros`), or of this one when the server runs here.
 */
import { createRequire } from 'node:module';
import { mainThreadCpuMicros } from './cpu-time.js';
import { runWorker, startWorker } from './measure.js';

/** autocannon's connections at saturation. */
export const CONNECTIONS = 32;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

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

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
}

/** What a load worker (paced or autocannon) reports. */
interface LoadMessage {
  error?: string;
  rps: number;
  count: number;
  non2xx: number;
  errors: number;
  latencies: number[];
}

/**
 * autocannon in its own worker thread (so the server's event loop carries only the
 * server), collecting each 200 response's time (sub-millisecond) for the p50. Inside a
 * worker autocannon returns raw counts, so requests/s is computed here.
 */
export const AUTOCANNON_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const autocannon = require(workerData.autocannonPath);
const latencies = [];
const instance = autocannon(workerData.options, (err, result) => parentPort.postMessage(err
  ? { error: String(err) }
  : { rps: result.totalCompletedRequests / result.duration, count: result.totalCompletedRequests, non2xx: result.non2xx, errors: result.errors, latencies }));
instance.on('response', (_client, status, _bytes, ms) => { if (status === 200) latencies.push(ms); });
`;
export const AUTOCANNON_PATH = createRequire(import.meta.url).resolve('autocannon');

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

/**
 * One request at a time on one kept-alive connection, the bodies taking turns request by
 * request: each pair is sent within a millisecond of each other, so the drift of a shared
 * machine (another job, a GC, the JIT) weighs on both alike, which phases of a second each
 * cannot promise. Latencies are kept per body.
 */
const ALTERNATING_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Pool } = require(workerData.undiciPath);
const { url, headers, bodies, seconds } = workerData;
const target = new URL(url);
const pool = new Pool(target.origin, { connections: 1 });
const latencies = bodies.map(() => []);
let failures = 0;
(async () => {
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i = (i + 1) % bodies.length) {
    const at = performance.now();
    try {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers, body: bodies[i] });
      await res.body.text();
      if (res.statusCode === 200) latencies[i].push(performance.now() - at); else failures++;
    } catch { failures++; }
  }
  await pool.close();
  parentPort.postMessage({ latencies, failures });
})();
`;

/** The p50 of each body's latency (ms), `bodies` sent in turn one at a time for `seconds`. */
export async function alternating(url: string, key: string | null, bodies: readonly string[], seconds: number): Promise<number[]> {
  const headers = { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) };
  const result = await runWorker<{ latencies: number[][]; failures: number }>(ALTERNATING_SOURCE, { undiciPath: UNDICI_PATH, url: `${url}/v1/chat/completions`, headers, bodies, seconds });
  if (result.failures > 0) throw new Error(`${url}: ${result.failures} requests failed`);
  return result.latencies.map(median);
}

export async function load(
  url: string,
  key: string | null,
  options: { seconds: number; rate?: number; paced?: boolean; body?: string; cpuMicros?: () => number },
): Promise<LoadResult> {
  const cpuMicros = options.cpuMicros ?? mainThreadCpuMicros;
  const body = options.body ?? BODY;
  const headers = { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) };
  const paced = options.paced && options.rate;
  const worker = paced
    ? startWorker<LoadMessage>(PACED_SOURCE, { undiciPath: UNDICI_PATH, url: `${url}/v1/chat/completions`, headers, body, rate: options.rate, seconds: options.seconds })
    : startWorker<LoadMessage>(AUTOCANNON_WORKER_SOURCE, {
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
      });
  const cpuBefore = cpuMicros();
  const result = await worker.result;
  const cpuSpent = cpuMicros() - cpuBefore;
  await worker.stop();
  if (result.error) throw new Error(result.error);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const sorted = result.latencies.toSorted((a, b) => a - b);
  return { rps: result.rps, p50: median(result.latencies), p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN, cpuPerRequest: cpuSpent / result.count };
}

/**
 * Load from outside the server's thread, for benches that compare two routes of one
 * in-process server: a zero-latency OpenAI-compatible upstream and a closed-loop load
 * generator, each in a worker thread, so the main event loop carries only the server;
 * the main thread's CPU time per answered request; and, with BENCH_PROFILE_DIR set, a V8
 * CPU profile of the server's thread per load phase.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { mainThreadCpuMicros } from './cpu-time.js';
import { startWorker } from './measure.js';

/** A zero-latency chat upstream (plain JS, in a worker): a fixed answer with usage. */
const UPSTREAM_SOURCE = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const answer = JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

export async function startWorkerUpstream(): Promise<{ baseUrl: string; close(): Promise<number> }> {
  const worker = new Worker(UPSTREAM_SOURCE, { eval: true });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => worker.terminate() };
}

/** Closed loops on undici (plain JS, in a worker): each sends its next request when the last answer is read. */
const LOAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Pool } = require(workerData.undiciPath);
const { origin, path, headers, body, connections, seconds } = workerData;
const pool = new Pool(origin, { connections });
const bytes = Buffer.from(body);
let done = 0, failed = 0, status = 0;
const started = performance.now();
const until = started + seconds * 1000;
const loop = async () => {
  while (performance.now() < until) {
    const res = await pool.request({ method: 'POST', path, headers, body: bytes });
    await res.body.text();
    if (res.statusCode === 200) done++; else { failed++; status = res.statusCode; }
  }
};
Promise.all(Array.from({ length: connections }, loop)).then(async () => {
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  parentPort.postMessage({ rps: done / elapsed, done, failed, status });
});
`;
const UNDICI_PATH = createRequire(import.meta.url).resolve('undici');

let profiles = 0;

/** With BENCH_PROFILE_DIR set, profiles the main thread until `stop` (`<dir>/<n>-<name>.cpuprofile`, for DevTools or speedscope). */
export async function startProfile(): Promise<{ stop(name: string): Promise<void> } | undefined> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(`${dir}/${++profiles}-${name.replaceAll('/', '_')}.cpuprofile`, JSON.stringify(profile));
    },
  };
}

export interface Load {
  rps: number;
  /** Main-thread CPU per answered request, µs: steadier than req/s on a shared machine. */
  cpuPerRequest: number;
}

/** `connections` closed loops POSTing `body` to `origin + path` for `seconds`; every answer must be 200. */
export async function closedLoopLoad(
  origin: string,
  path: string,
  options: { headers: Record<string, string>; body: string; connections: number; seconds: number },
): Promise<Load> {
  const worker = startWorker<{ rps: number; done: number; failed: number; status: number }>(LOAD_SOURCE, {
    undiciPath: UNDICI_PATH,
    origin,
    path,
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    seconds: options.seconds,
  });
  const profiler = await startProfile();
  const cpuBefore = mainThreadCpuMicros();
  const result = await worker.result;
  const cpu = mainThreadCpuMicros() - cpuBefore;
  await profiler?.stop(`${path}-${result.done}req`);
  await worker.stop();
  if (result.failed > 0) throw new Error(`${origin}${path}: ${result.failed} answers were not 200 (the last ${result.status})`);
  return { rps: result.rps, cpuPerRequest: cpu / result.done };
}

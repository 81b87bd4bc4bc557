/**
 * Embeddings throughput and latency on a random-weight model of the real
 * all-MiniLM-L6-v2 size (its config.json and tokenizer from shared/data; skipped when
 * absent): the runtime in process (batches of 32, with as many callers as the runtime
 * runs batches at once, so every core is busy: the ceiling; and one input per call, one
 * caller) against 32 concurrent HTTP clients of one sentence each, plus /healthz latency
 * under that load, and single-request latency in process and over HTTP, in turn.
 *
 * The HTTP clients run in the server's event loop, as the figures were measured;
 * BENCH_CLIENT=thread moves them to a worker thread of their own (a load generator on the
 * same machine: still sharing the two cores, no longer sharing the event loop), which
 * also splits the CPU per request between the server and the clients.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { loadConfig } from '../src/config/load.js';
import { OnnxBackend } from '../src/inference/backends/onnx/index.js';
import { buildBertEncoderLike } from '../test/fixtures/model-builders/bert.js';
import { startTestServer } from '../test/helpers/harness.js';

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data/models/all-minilm-l6-v2');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const WORDS = 'the quick brown fox jumps over a lazy dog while people talk about music sports weather travel and business news'.split(' ');

/** ~30-token English sentences, all different. */
function sentence(i: number): string {
  const words = Array.from({ length: 24 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]);
  return `${words.join(' ')} number ${i}.`;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

/** Runs `callers` loops of `step` (each returns items done) for `seconds`; items per second of the time they really took. */
async function rateOver(seconds: number, callers: number, step: () => Promise<number>): Promise<number> {
  const started = performance.now();
  const until = started + seconds * 1000;
  const counts = await Promise.all(
    Array.from({ length: callers }, async () => {
      let done = 0;
      while (performance.now() < until) done += await step();
      return done;
    }),
  );
  // The last call of each loop ends after the deadline: divide by the time it all took.
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}

const median = (xs: number[]) => pct(xs, 0.5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

async function localRunner(modelsDir: string) {
  const config = loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bench-')), MODELS_DIR: modelsDir, LOG_LEVEL: 'silent' });
  const backend = new OnnxBackend(config.runtimes, pino({ level: 'silent' }));
  const model = config.models['all-minilm-l6-v2']!;
  const ctx = { requestId: 'bench', signal: new AbortController().signal, model };
  let n = 0;
  const batch = () => Array.from({ length: 32 }, () => sentence(n++));
  await backend.embed({ ...ctx, inputs: batch() });
  // One caller per batch the runtime can run at once (one per session replica).
  const callers = Math.max(1, Math.floor(backend.runtime.workers / (config.runtimes.onnxThreads ?? 1)));
  return {
    callers,
    batched: (seconds: number) => rateOver(seconds, callers, async () => (await backend.embed({ ...ctx, inputs: batch() })).vectors.length),
    single: () => rateOver(SECONDS, 1, async () => (await backend.embed({ ...ctx, inputs: [sentence(n++)] })).vectors.length),
    /** One in-process call of one sentence; its latency in ms. */
    once: async () => {
      const t = performance.now();
      await backend.embed({ ...ctx, inputs: [sentence(n++)] });
      return performance.now() - t;
    },
    close: () => backend.close(),
  };
}

/**
 * The load generator: 32 closed-loop clients, or one request at a time (timed).
 * Self-contained (it is also stringified into a worker thread): only its arguments and globals.
 */
function makeClient(PoolClass: typeof Pool, baseUrl: string, key: string, sentenceOf: (i: number) => string) {
  const pool = new PoolClass(baseUrl, { connections: 40, pipelining: 1 });
  let n = 0;
  const embed = async (input: string) => {
    const res = await pool.request({
      path: '/v1/embeddings',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'all-minilm-l6-v2', input }),
    });
    // Read, not parsed (as autocannon does): the load generator shares the two cores with
    // the server, and parsing 384 numbers per answer would cost it a third of a millisecond.
    const text = await res.body.text();
    if (res.statusCode !== 200 || !text.startsWith('{"object":"list"')) throw new Error(`embeddings answered ${res.statusCode}: ${text.slice(0, 200)}`);
  };
  const forSeconds = async (seconds: number, step: () => Promise<void>) => {
    const until = performance.now() + seconds * 1000;
    let done = 0;
    while (performance.now() < until) {
      await step();
      done++;
    }
    return done;
  };
  return {
    async concurrent(seconds: number, clients: number): Promise<number> {
      const started = performance.now();
      const counts = await Promise.all(Array.from({ length: clients }, () => forSeconds(seconds, () => embed(sentenceOf(n++)))));
      return counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
    },
    async once(): Promise<number> {
      const t = performance.now();
      await embed(sentenceOf(n++));
      return performance.now() - t;
    },
    close: () => pool.close(),
  };
}

type Client = Omit<ReturnType<typeof makeClient>, 'close'> & { close(): Promise<void>; tid?: () => Promise<number | null> };

/** CPU milliseconds used so far by each thread of this process (Linux; empty elsewhere). */
function threadCpu(): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * (1000 / 100));
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The same client in a worker thread, driven by messages. */
function threadClient(baseUrl: string, key: string): Client {
  const undici = createRequire(import.meta.url).resolve('undici');
  const source = `const __name = (f) => f;
const { parentPort, workerData } = require('node:worker_threads');
const { Pool } = require(workerData.undici);
const WORDS = ${JSON.stringify(WORDS)};
const sentence = ${sentence.toString()};
const client = (${makeClient.toString()})(Pool, workerData.baseUrl, workerData.key, sentence);
client.tid = () => { try { return Number(String(require('node:fs').readlinkSync('/proc/thread-self')).split('/').pop()); } catch { return null; } };
parentPort.on('message', async ({ id, op, args }) => {
  try { parentPort.postMessage({ id, ok: true, value: await client[op](...args) }); }
  catch (err) { parentPort.postMessage({ id, ok: false, error: String(err) }); }
});`;
  const worker = new Worker(source, { eval: true, workerData: { undici, baseUrl, key } });
  let nextId = 1;
  const waiting = new Map<number, (msg: { ok: boolean; value?: unknown; error?: string }) => void>();
  worker.on('message', (msg: { id: number; ok: boolean; value?: unknown; error?: string }) => waiting.get(msg.id)?.(msg));
  const call = <T>(op: string, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (msg) => {
        waiting.delete(id);
        if (msg.ok) resolve(msg.value as T);
        else reject(new Error(msg.error));
      });
      worker.postMessage({ id, op, args });
    });
  return {
    tid: () => call<number | null>('tid'),
    concurrent: (seconds, clients) => call<number>('concurrent', seconds, clients),
    once: () => call<number>('once'),
    close: async () => {
      await call('close');
      await worker.terminate();
    },
  };
}

async function httpRunner(modelsDir: string) {
  const server = await startTestServer({ env: { MODELS_DIR: modelsDir, RATE_LIMIT_RPM: '100000000' } });
  const { key } = await server.newTenant({ balanceUsd: 1000 });
  const inline = process.env.BENCH_CLIENT !== 'thread';
  const client: Client = inline ? makeClient(Pool, server.baseUrl, key, sentence) : threadClient(server.baseUrl, key);
  const probePool = new Pool(server.baseUrl, { connections: 2, pipelining: 1 });
  await client.concurrent(0.5, 32);
  const clientTid = (await client.tid?.()) ?? null;
  const model = server.core.registry.find('all-minilm-l6-v2')!;
  const backend = (await server.core.registry.backendFor(model, 'embed')) as OnnxBackend;
  const stats = () => ({ ...(backend.batchStats(model.id) ?? { batches: 0, items: 0, largestBatch: 0 }) });
  return {
    clientMode: inline ? "in the server's event loop" : 'in a worker thread',
    /** 32 clients, one sentence per request, with /healthz probed every 10 ms meanwhile. */
    concurrent: async (seconds: number) => {
      let loaded = true;
      const health: number[] = [];
      const probe = (async () => {
        while (loaded) {
          const t = performance.now();
          await (await probePool.request({ path: '/healthz', method: 'GET' })).body.text();
          health.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const before = stats();
      const cpuBefore = threadCpu();
      const started = performance.now();
      const rate = await client.concurrent(seconds, 32);
      const elapsed = (performance.now() - started) / 1000;
      const cpuAfter = threadCpu();
      const after = stats();
      loaded = false;
      await probe;
      // CPU per request: the server's event loop, the client thread, everything else (ONNX workers, GC, libuv).
      const used = (tid: number | null | undefined) => (tid ? (cpuAfter.get(tid) ?? 0) - (cpuBefore.get(tid) ?? 0) : 0);
      let total = 0;
      for (const [tid, ms] of cpuAfter) total += ms - (cpuBefore.get(tid) ?? 0);
      const requests = rate * elapsed;
      const main = used(process.pid);
      const clientCpu = used(clientTid);
      const cpu = { main: main / requests, client: clientCpu / requests, rest: (total - main - clientCpu) / requests };
      return { rate, health, cpu, meanBatch: (after.items - before.items) / Math.max(1, after.batches - before.batches) };
    },
    once: () => client.once(),
    close: async () => {
      await client.close();
      await probePool.close();
      await server.close();
    },
  };
}

/**
 * Single-request p50s in process and over HTTP, one call of each in turn, so both see
 * the same machine (measured apart, seconds of drift in other tenants' load showed up as
 * a difference between them).
 */
async function pairedP50s(local: { once(): Promise<number> }, http: { once(): Promise<number> }, seconds: number) {
  const inProcess: number[] = [];
  const overHttp: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    inProcess.push(await local.once());
    overHttp.push(await http.once());
  }
  return { inProcess: median(inProcess), http: median(overHttp) };
}

export default async function embeddingsBench(): Promise<BenchRow[]> {
  if (!existsSync(SOURCE)) return [{ name: 'embeddings', value: 0, unit: 'skipped', note: `${SOURCE} is absent` }];
  const modelsDir = mkdtempSync(path.join(tmpdir(), 'bench-models-'));
  buildBertEncoderLike(path.join(modelsDir, 'all-minilm-l6-v2'), SOURCE);
  const local = await localRunner(modelsDir);
  const http = await httpRunner(modelsDir);
  // Rounds alternate the four measurements, so load from elsewhere on a shared machine
  // weighs on all of them alike; each figure is the median of its rounds, and each ratio
  // the median of its rounds' ratios (the two sides of one round saw the same machine).
  const r = { batched: [] as number[], single: [] as number[], singleP50: [] as number[], http: [] as number[], httpP50: [] as number[], meanBatch: [] as number[] };
  const cpu: { main: number; client: number; rest: number }[] = [];
  const health: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // In-process and HTTP throughput as A B B A halves, so a trend in the machine's load cancels out.
    const firstBatched = await local.batched(SECONDS / 2);
    const halves = [await http.concurrent(SECONDS / 2), await http.concurrent(SECONDS / 2)];
    r.batched.push((firstBatched + (await local.batched(SECONDS / 2))) / 2);
    r.http.push((halves[0]!.rate + halves[1]!.rate) / 2);
    r.meanBatch.push((halves[0]!.meanBatch + halves[1]!.meanBatch) / 2);
    for (const half of halves) {
      cpu.push(half.cpu);
      health.push(...half.health);
    }
    r.single.push(await local.single());
    const p50s = await pairedP50s(local, http, SECONDS);
    r.singleP50.push(p50s.inProcess);
    r.httpP50.push(p50s.http);
  }
  await http.close();
  await local.close();
  const [batched, single, singleP50, throughput, httpP50, meanBatch] = [r.batched, r.single, r.singleP50, r.http, r.httpP50, r.meanBatch].map(median) as number[];
  const perRound = (top: number[], bottom: number[]) => top.map((x, i) => x / bottom[i]!);
  const rounds = (ratios: number[]) => `rounds ${ratios.map((x) => x.toFixed(3)).join(', ')}`;
  const [overBatched, overSingle, p50Ratio] = [perRound(r.http, r.batched), perRound(r.http, r.single), perRound(r.httpP50, r.singleP50)];
  return [
    { name: 'in-process, batches of 32', value: batched!, unit: 'sentences/s', note: `${local.callers} caller(s) at once` },
    { name: 'in-process, one input per call', value: single!, unit: 'sentences/s' },
    { name: 'in-process single call p50', value: singleP50!, unit: 'ms' },
    { name: 'HTTP, 32 concurrent clients', value: throughput!, unit: 'sentences/s', note: `mean batch ${meanBatch!.toFixed(1)}; clients ${http.clientMode}` },
    { name: 'HTTP / in-process batches of 32', value: median(overBatched), unit: 'ratio', note: `target ≥ 0.9; ${rounds(overBatched)}` },
    { name: 'HTTP / in-process one per call', value: median(overSingle), unit: 'ratio', note: `target ≥ 1.5; ${rounds(overSingle)}` },
    {
      name: 'CPU per HTTP request: event loop / client thread / rest',
      value: median(cpu.map((c) => c.main)),
      unit: 'ms',
      note: `${median(cpu.map((c) => c.main)).toFixed(2)} / ${median(cpu.map((c) => c.client)).toFixed(2)} / ${median(cpu.map((c) => c.rest)).toFixed(2)} ms (rest: ONNX workers, GC, libuv)`,
    },
    { name: 'HTTP single request p50', value: httpP50!, unit: 'ms' },
    { name: 'HTTP p50 / in-process p50', value: median(p50Ratio), unit: 'ratio', note: `target ≤ 1.2; ${rounds(p50Ratio)}` },
    { name: '/healthz p50 under full load', value: pct(health, 0.5), unit: 'ms' },
    { name: '/healthz p99 under full load', value: pct(health, 0.99), unit: 'ms', note: 'target ≤ 50' },
  ];
}

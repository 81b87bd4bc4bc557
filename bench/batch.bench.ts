/**
 * Files and batches:
 * - creation of a 50,000-line, ~200 MB input: the streaming validator alone and the whole
 *   in-process create (validate + plan + store), in MB/s, with peak RSS growth;
 * - the runner against a zero-latency fake upstream on loopback, in lines/s, next to the
 *   upstream's own capacity measured in the same run at the same concurrency;
 * - a 100 MB upload over HTTP on loopback: MB/s and peak RSS growth.
 * Inputs are generated in a temp dir and removed afterwards. BENCH_RUNNER_LINES (default
 * 10000) sizes the runner run.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { BenchRow } from './run.js';
import { validateBatchInput } from '../src/domain/batches/batch-validator.js';
import { FilesRepository } from '../src/storage/db/repositories/files.repository.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../test/helpers/fake-upstream.js';

const MB = 1024 * 1024;
const MODEL = 'llama-3.1-8b-instruct-fast';
const RUNNER_LINES = Number(process.env.BENCH_RUNNER_LINES ?? 10_000);

/** Samples RSS every 10 ms while `work` runs; returns its result, seconds and peak growth in MB. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; rssGrowthMb: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const started = performance.now();
  try {
    const value = await work();
    return { value, seconds: (performance.now() - started) / 1000, rssGrowthMb: (Math.max(peak, process.memoryUsage.rss()) - base) / MB };
  } finally {
    clearInterval(timer);
  }
}

function line(i: number, pad: string): string {
  const body = { model: MODEL, max_tokens: 64, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `${i} ${pad}` }] };
  return JSON.stringify({ custom_id: `request-${i}`, method: 'POST', url: '/v1/chat/completions', body });
}

/** Writes `lines` JSONL lines of about `bytesPerLine` bytes each. */
async function writeInput(file: string, lines: number, bytesPerLine: number): Promise<number> {
  const pad = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytesPerLine / 27)).slice(0, bytesPerLine - 200);
  const out = createWriteStream(file);
  for (let i = 1; i <= lines; i++) {
    if (!out.write(`${line(i, pad)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return statSync(file).size;
}

async function creationRows(dir: string, server: TestServer): Promise<BenchRow[]> {
  const file = path.join(dir, 'input-200mb.jsonl');
  const bytes = await writeInput(file, 50_000, 4_150);
  const mb = bytes / MB;
  const validator = await measured(() =>
    validateBatchInput(createReadStream(file, { highWaterMark: 256 * 1024 }), { endpoint: '/v1/chat/completions', shardLines: 500 }),
  );
  // The whole create, in process: the input is stored as a file record (uploads stop at 100 MB).
  const { key, projectId } = await server.newTenant();
  const id = 'file-bench0000000000000000000000';
  const blob = await server.core.blobs.put(`files/${id}.jsonl`, createReadStream(file));
  await new FilesRepository(server.core.database).insert({
    id, projectId, purpose: 'batch', filename: 'input.jsonl', bytes: blob.bytes, blobKey: blob.key, isError: false,
    status: 'processed', batchId: null, createdAtMs: Date.now(), expiresAtMs: null, deletedAtMs: null,
  });
  const create = await measured(async () => {
    const res = await fetch(`${server.baseUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    return (await res.json()) as { request_counts?: { total: number } };
  });
  if (create.value.request_counts?.total !== 50_000) throw new Error(`create failed: ${JSON.stringify(create.value)}`);
  return [
    { name: 'validation input', value: mb, unit: 'MB', note: `${validator.value.totalLines} lines, ${validator.value.shards.length} shards` },
    { name: 'validation throughput (validator alone)', value: mb / validator.seconds, unit: 'MB/s', note: 'target ≥ 100' },
    { name: 'validation peak RSS growth (validator alone)', value: validator.rssGrowthMb, unit: 'MB', note: 'target < 64' },
    { name: 'POST /v1/batches throughput (validate + plan + store, over HTTP)', value: mb / create.seconds, unit: 'MB/s', note: 'target ≥ 100' },
    { name: 'POST /v1/batches peak RSS growth', value: create.rssGrowthMb, unit: 'MB', note: 'whole process: server and client' },
  ];
}

/** The fake upstream's own capacity: direct POSTs at `concurrency`, for `total` requests. */
async function upstreamCapacity(upstream: FakeUpstream, concurrency: number, total: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  let next = 0;
  const worker = async () => {
    while (next++ < total) {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(`${upstream.baseUrl}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return total / ((performance.now() - started) / 1000);
}

async function runnerRows(dir: string, server: TestServer, upstream: FakeUpstream): Promise<BenchRow[]> {
  const file = path.join(dir, 'runner.jsonl');
  await writeInput(file, RUNNER_LINES, 300);
  const { key } = await server.newTenant({ balanceUsd: 1000 });
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([await import('node:fs/promises').then((fs) => fs.readFile(file))]), 'runner.jsonl');
  const uploaded = (await (await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as { id: string };
  const started = performance.now();
  const created = (await (
    await fetch(`${server.baseUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    })
  ).json()) as { id: string };
  let status = '';
  while (!['completed', 'failed', 'expired', 'cancelled'].includes(status)) {
    await new Promise((r) => setTimeout(r, 50));
    const b = (await (await fetch(`${server.baseUrl}/v1/batches/${created.id}`, { headers: { 'x-api-key': key } })).json()) as { status: string };
    status = b.status;
  }
  const linesPerSecond = RUNNER_LINES / ((performance.now() - started) / 1000);
  const concurrency = server.core.config.batches.perBatchConcurrency;
  const capacity = await upstreamCapacity(upstream, concurrency, Math.min(RUNNER_LINES, 10_000));
  return [
    { name: 'runner throughput (zero-latency upstream)', value: linesPerSecond, unit: 'lines/s', note: `${RUNNER_LINES} lines, status ${status}; target ≥ 1000` },
    { name: 'fake upstream capacity (same concurrency)', value: capacity, unit: 'req/s', note: `${concurrency} concurrent` },
    { name: 'runner / upstream capacity', value: linesPerSecond / capacity, unit: 'ratio' },
  ];
}

async function uploadRows(server: TestServer): Promise<BenchRow[]> {
  const { key } = await server.newTenant();
  const boundary = '----bench';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.from(`${line(1, 'x'.repeat(900))}\n`.repeat(64));
  const fileBytes = Math.floor((100 * MB - 1) / chunk.length) * chunk.length;
  const result = await measured(
    () =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        void (async () => {
          req.write(head);
          for (let sent = 0; sent < fileBytes; sent += chunk.length) if (!req.write(chunk)) await once(req, 'drain');
          req.end(tail);
        })();
      }),
  );
  if (result.value !== 200) throw new Error(`upload answered ${result.value}`);
  return [
    { name: 'upload 100 MB over HTTP', value: fileBytes / MB / result.seconds, unit: 'MB/s' },
    { name: 'upload peak RSS growth', value: result.rssGrowthMb, unit: 'MB', note: 'whole process: server and client' },
  ];
}

export default async function batchBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sluice-bench-batch-'));
  const upstream = await startFakeUpstream();
  const yaml = `models:\n  ${MODEL}:\n    backend: openai\n    base_url: ${upstream.baseUrl}\n`;
  // Creation and upload run on a server without workers, so the 50,000-line batch is not executed.
  const quiet = await startTestServer({ env: { RATE_LIMIT_RPM: '100000000' } });
  const server = await startTestServer({ yaml, env: { RATE_LIMIT_RPM: '100000000' }, startWorkers: true });
  try {
    const upload = await uploadRows(quiet);
    const creation = await creationRows(dir, quiet);
    const runner = await runnerRows(dir, server, upstream);
    return [...creation, ...runner, ...upload];
  } finally {
    await quiet.close();
    await server.close();
    await upstream.close();
    for (const d of [dir, quiet.dataDir, server.dataDir]) rmSync(d, { recursive: true, force: true });
  }
}

/**
 * Two checkouts of Sluice (each with its node_modules) side by side, each server in its own
 * process: `npx tsx bench/compare-trees.ts <before-dir> <after-dir>`. Both serve one chat
 * model on the same upstream (a worker here, as in proxy.bench.ts; `BENCH_YAML` replaces
 * the `models:` line's model entry, `{upstream}` standing for its URL); rounds alternate
 * the two (the order flips every round) at saturation, and each round gives req/s and the
 * server process's CPU per request (user + system, all its threads, from /proc), as ratios
 * after ÷ before of the same round. Prints one line per round and the medians.
 * `BENCH_STREAM=1` sends streamed chat calls instead (`stream: true`, usage included).
 * `BENCH_RATE=<req/s>` paces the calls at that constant rate instead of saturating, and each
 * round also gives both sides' p50 and p99 (ms), and after − before of each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load, startUpstream } from './proxy.bench.js';
import { processCpuMicros } from './cpu-time.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const MODEL = process.env.BENCH_YAML ?? '{ backend: openai, base_url: "{upstream}/v1" }';
const BODY = process.env.BENCH_STREAM === '1'
  ? JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16, stream: true, stream_options: { include_usage: true } })
  : undefined;

/** Starts a test server of the checkout in `dir` in its own process; resolves with its URL, a key and its pid. */
function serve(dir: string, upstreamUrl: string): Promise<{ url: string; key: string; pid: number; child: ChildProcess }> {
  const yaml = `models:\n  gpt-oss-120b: ${MODEL.replaceAll('{upstream}', upstreamUrl)}\n`;
  const source = `
    const { startTestServer } = await import(${JSON.stringify(path.join(path.resolve(dir), 'test/helpers/harness.ts'))});
    const server = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' }, yaml: ${JSON.stringify(yaml)} });
    const { key } = await server.newTenant({ balanceUsd: 100000 });
    process.stdout.write(JSON.stringify({ url: server.baseUrl, key }) + '\\n');
    process.on('SIGTERM', () => server.close().finally(() => process.exit(0)));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ ...(JSON.parse(line) as { url: string; key: string }), pid: child.pid!, child });
    });
    child.once('exit', (code) => reject(new Error(`server in ${dir} exited with ${code}: ${out}`)));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const [beforeDir, afterDir] = process.argv.slice(2);
if (!beforeDir || !afterDir) throw new Error('usage: tsx bench/compare-trees.ts <before-dir> <after-dir>');
const upstream = await startUpstream();
const sides = { before: await serve(beforeDir, upstream.url), after: await serve(afterDir, upstream.url) };
try {
  for (const side of Object.values(sides)) await load(side.url, side.key, { seconds: 2, body: BODY });
  const rps: number[] = [];
  const cpu: number[] = [];
  const p50Added: number[] = [];
  const p99Added: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const got: Record<string, { rps: number; cpu: number; p50: number; p99: number }> = {};
    for (const name of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      const side = sides[name];
      const cpuBefore = processCpuMicros(side.pid);
      const result = await load(side.url, side.key, { seconds: PHASE_SECONDS, body: BODY, ...(RATE ? { rate: RATE, paced: true } : {}) });
      got[name] = { rps: result.rps, cpu: (processCpuMicros(side.pid) - cpuBefore) / (result.rps * PHASE_SECONDS), p50: result.p50, p99: result.p99 };
    }
    rps.push(got.after!.rps / got.before!.rps);
    cpu.push(got.after!.cpu / got.before!.cpu);
    p50Added.push(got.after!.p50 - got.before!.p50);
    p99Added.push(got.after!.p99 - got.before!.p99);
    const latency = RATE
      ? `; p50 ${got.before!.p50.toFixed(2)} → ${got.after!.p50.toFixed(2)} ms, p99 ${got.before!.p99.toFixed(2)} → ${got.after!.p99.toFixed(2)} ms`
      : '';
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `round ${i + 1}: before ${got.before!.rps.toFixed(0)} req/s ${got.before!.cpu.toFixed(1)} µs/req, after ${got.after!.rps.toFixed(0)} req/s ${got.after!.cpu.toFixed(1)} µs/req; ` +
        `after ÷ before: req/s ${rps.at(-1)!.toFixed(3)}, CPU per request ${cpu.at(-1)!.toFixed(3)}${latency} (load ${loadavg})`,
    );
  }
  console.log(`median after ÷ before: req/s ${median(rps).toFixed(3)}, CPU per request ${median(cpu).toFixed(3)} over ${ROUNDS} rounds`);
  if (RATE) console.log(`median after − before at ${RATE} req/s: p50 ${median(p50Added).toFixed(3)} ms, p99 ${median(p99Added).toFixed(3)} ms`);
} finally {
  for (const side of Object.values(sides)) side.child.kill('SIGTERM');
  await upstream.close();
}

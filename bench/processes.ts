/**
 * Servers in their own processes, as a user runs them: a Sluice replica (`npm start`'s
 * compiled `dist/src/main.js`, built once per run, configured by environment and a YAML
 * file), a zero-latency OpenAI-compatible engine and other plain Node scripts
 * (`startScript`), and an autocannon load in a worker thread of the bench's process that
 * reports requests/s and the p50 of each answer's own time (sub-millisecond). With
 * BENCH_PROFILE_DIR set, each Sluice process runs with `--cpu-prof` and writes its V8 CPU
 * profiles into `<dir>/<n>-<name>/` when it exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN } from '../test/helpers/harness.js';
import { tempDir } from '../test/helpers/databases.js';
import { mainThreadCpuMicrosOf, processCpuMicros } from './cpu-time.js';
import { runWorker } from './measure.js';
import { AUTOCANNON_PATH, AUTOCANNON_WORKER_SOURCE } from './proxy-load.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The engine: answers every chat call at once with a fixed completion and its usage. */
const ENGINE_SOURCE = `
const http = require('node:http');
const answer = JSON.stringify({ id: 'chatcmpl-zero', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url.endsWith('/models')) { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"object":"list","data":[]}'); return; }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write('ready ' + server.address().port + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export interface BenchProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** CPU time (user + system) the process has used, all its threads, in µs (Linux /proc; 0 elsewhere). */
  cpuMicros(): number;
  /** CPU time of its main thread (its event loop), in µs (Linux /proc; 0 elsewhere). */
  mainThreadCpuMicros(): number;
  /** SIGTERM, then the exit (a profiled process writes its profile as it exits). */
  stop(): Promise<void>;
}

/** A started child process as a BenchProcess (its CPU, its main thread's CPU, and stop()). */
export function benchProcess(child: ChildProcess, baseUrl: string): BenchProcess {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    baseUrl,
    pid: child.pid!,
    cpuMicros: () => processCpuMicros(child.pid!),
    mainThreadCpuMicros: () => mainThreadCpuMicrosOf(child.pid!),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Keeps what the child prints until `until` settles (for the error if it exits first), then reads and drops it. */
async function outputUntil<T>(child: ChildProcess, what: string, until: (failed: Promise<never>) => Promise<T>): Promise<T> {
  let output = '';
  const keep = (c: Buffer) => {
    output += c.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let onExit!: (code: number | null, signal: string | null) => void;
  const failed = new Promise<never>((_, reject) => {
    onExit = (code, signal) => reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${output}`));
    child.once('exit', onExit);
  });
  failed.catch(() => {});
  try {
    return await until(failed);
  } finally {
    child.off('exit', onExit);
    child.stdout?.off('data', keep).resume();
    child.stderr?.off('data', keep).resume();
  }
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits first. */
function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return outputUntil(child, what, (failed) => {
    const lines = createInterface({ input: child.stdout! });
    const matched = new Promise<RegExpExecArray>((resolve) => {
      lines.on('line', (line) => {
        const match = pattern.exec(line);
        if (match) {
          lines.close();
          resolve(match);
        }
      });
    });
    return Promise.race([matched, failed]);
  });
}

/** Resolves once `baseUrl`'s /healthz answers (whatever the log level prints); rejects if the child exits first. */
function waitUntilServing(child: ChildProcess, baseUrl: string, what: string): Promise<void> {
  return outputUntil(child, what, async (failed) => {
    for (;;) {
      const up = await Promise.race([fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false), failed]);
      if (up) return;
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 50)), failed]);
    }
  });
}

/** A free loopback port (the kernel's pick, released for the server about to take it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A plain Node script (`source`, CommonJS, run by `node -e`) that prints `ready <port>` once it listens. */
export async function startScript(what: string, source: string, options: { env?: Record<string, string>; nodeFlags?: string[] } = {}): Promise<BenchProcess> {
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '-e', source], { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const [, port] = await waitForLine(child, /^ready (\d+)/, what);
  return benchProcess(child, `http://127.0.0.1:${port}`);
}

export async function startZeroEngine(): Promise<BenchProcess> {
  const engine = await startScript('the engine', ENGINE_SOURCE);
  return { ...engine, baseUrl: `${engine.baseUrl}/v1` };
}

export interface SluiceProcess extends BenchProcess {
  /** A new project with `balanceUsd` of credit, and a key of it (through the admin API). */
  newTenant(balanceUsd: number): Promise<{ projectId: string; key: string }>;
}

let profiled = 0;

/**
 * With BENCH_PROFILE_DIR set, node's flags for a V8 CPU profile of the process `name`,
 * written as it exits (`intervalMicros`: the sampling interval, V8's default 1,000 µs).
 * One folder per process (a worker thread writes a profile of its own: the largest is the
 * main thread's).
 */
export function cpuProfileFlags(name: string, intervalMicros?: number, profileDir = process.env.BENCH_PROFILE_DIR): string[] {
  if (!profileDir) return [];
  const interval = intervalMicros === undefined ? [] : [`--cpu-prof-interval=${intervalMicros}`];
  return ['--cpu-prof', ...interval, `--cpu-prof-dir=${path.join(profileDir, `${++profiled}-${name.replace(/\W+/g, '-')}`)}`];
}

const built = new Set<string>();

/**
 * Node's arguments for the server of the checkout `root` as `npm start` runs it: its
 * compiled `dist/src/main.js`, compiled from its sources (the TypeScript build alone, not
 * the console's) the first time a bench of this run starts it, so a figure never comes
 * from an older build. Not tsx: its loader thread and transformed modules are no part of
 * what a user runs.
 */
export function sluiceEntry(root = ROOT): string[] {
  if (!built.has(root)) {
    const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
    if (tsc.status !== 0) throw new Error(`building ${root} failed:\n${tsc.stdout}${tsc.stderr}`);
    built.add(root);
  }
  return [path.join(root, 'dist/src/main.js')];
}

export interface SluiceOptions {
  /** Another checkout's server (a baseline); this one's by default. */
  root?: string;
  /** The V8 profile's sampling interval, when profiled. */
  profileIntervalMicros?: number;
  /** Profiled into this folder, whether or not BENCH_PROFILE_DIR is set. */
  profileDir?: string;
}

/**
 * A Sluice replica with this environment (DATABASE_URL, LOG_LEVEL, …) and configuration
 * file text, ready once its /healthz answers (so any log level will do). Stopped, its data
 * folder is removed.
 */
export async function startSluice(name: string, env: Record<string, string>, yaml: string, options: SluiceOptions = {}): Promise<SluiceProcess> {
  const root = options.root ?? ROOT;
  const dataDir = tempDir('sluice-bench-');
  const configPath = path.join(dataDir, 'sluice.yaml');
  writeFileSync(configPath, yaml);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...cpuProfileFlags(name, options.profileIntervalMicros, options.profileDir), ...sluiceEntry(root)], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, SLUICE_CONFIG: configPath, SLUICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitUntilServing(child, baseUrl, `sluice (${name})`);
  const admin = async (route: string, body: unknown) => {
    const res = await fetch(`${baseUrl}/admin/v1${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const running = benchProcess(child, baseUrl);
  return {
    ...running,
    async stop() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async newTenant(balanceUsd) {
      const project = await admin('/projects', { name: 'bench' });
      const projectId = project.id as string;
      await admin(`/projects/${projectId}/credits`, { amount_usd: balanceUsd });
      const { key } = await admin(`/projects/${projectId}/keys`, { name: 'bench' });
      return { projectId, key: key as string };
    },
  };
}

export interface LoadFigures {
  rps: number;
  /** Median time of a 200 answer, ms. */
  p50: number;
}

/** `connections` closed loops (autocannon in a worker thread, each 200 answer's time feeding the p50) POSTing `body` to `url` for `seconds`; any answer but 200 fails the load. */
export async function load(url: string, key: string, body: string, options: { connections: number; seconds: number }): Promise<LoadFigures> {
  const result = await runWorker<{ error?: string; rps: number; non2xx: number; errors: number; latencies: number[] }>(AUTOCANNON_WORKER_SOURCE, {
    autocannonPath: AUTOCANNON_PATH,
    options: { url, method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body, connections: options.connections, duration: options.seconds },
  });
  if (result.error) throw new Error(result.error);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const sorted = result.latencies.sort((a, b) => a - b);
  return { rps: result.rps, p50: sorted[Math.floor(sorted.length / 2)] ?? NaN };
}

/**
 * Fake engines in their own processes (test/fixtures/fake-engine.ts), for the routing
 * tests: start one in a mode, ask it what it received, script its next answers, kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Behavior } from './fake-upstream.js';
import { refusedPort } from './refused-port.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface EngineProcess {
  readonly baseUrl: string;
  readonly port: number;
  /** Calls received per path (`/chat/completions`), since the start or the last reset(). */
  counts(): Promise<Record<string, number>>;
  /** Calls received per `model` of the request body (deployments on one engine differ by upstream_model). */
  models(): Promise<Record<string, number>>;
  /** The next calls to `path` answer with `behaviors`, in order. */
  script(path: string, ...behaviors: Behavior[]): Promise<void>;
  reset(): Promise<void>;
  /** Ends the process (SIGKILL: an engine that dies, nothing closed cleanly). */
  kill(): Promise<void>;
}

export async function startEngineProcess(mode: 'healthy' | 'fail-503' | `slow:${number}`, port = 0): Promise<EngineProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/fixtures/fake-engine.ts'), mode, String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening = await readyPort(child);
  const baseUrl = `http://127.0.0.1:${listening}/v1`;
  const control = async (method: string, what: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${what}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return method === 'GET' ? res.json() : res.arrayBuffer();
  };
  return {
    baseUrl,
    port: listening,
    counts: async () => ((await control('GET', '/_stats')) as { counts: Record<string, number> }).counts,
    models: async () => {
      const { requests } = (await control('GET', '/_stats')) as { requests: { model?: string }[] };
      const counts: Record<string, number> = {};
      for (const r of requests) if (r.model) counts[r.model] = (counts[r.model] ?? 0) + 1;
      return counts;
    },
    script: async (p, ...behaviors) => void (await control('POST', '/_script', { path: p, behaviors })),
    reset: async () => void (await control('POST', '/_reset', {})),
    kill: () => stop(child),
  };
}

/** A base URL where no engine listens, and none will during the run (refused-port.ts says why not a killed engine's port). */
export async function deadEngineUrl(): Promise<string> {
  return `http://127.0.0.1:${await refusedPort()}/v1`;
}

function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`fake engine did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /ready (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fake engine exited with ${code}: ${out}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * SIGTERM from a load balancer's point of view: the listener closes at once (a new
 * connection is refused, which every balancer retries on another replica), the request in
 * flight still gets its whole answer, and SHUTDOWN_GRACE_SECONDS bounds how long a request
 * that never ends can hold the process. The server is the built one (test/fixtures/slow-server.mjs
 * runs serve() from dist/src/main.js with two test routes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtEntry, REPO } from '../../helpers/built.js';
import { call } from '../../helpers/harness.js';
import { tempDir } from '../../helpers/databases.js';

interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  waitForLog(message: string): Promise<Record<string, any>>;
  /** Every line written so far, parsed. */
  logs: Record<string, any>[];
  exited: Promise<number | null>;
}

async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = tempDir();
  const child = spawn(process.execPath, [path.join(REPO, 'test/fixtures/slow-server.mjs'), builtEntry('src/main.ts')], {
    cwd: dataDir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', SLUICE_WORKERS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, any>[] = [];
  const watchers: { message: string; resolve: (line: Record<string, any>) => void }[] = [];
  // 'close', not 'exit': every line the process wrote has been read by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const onLine = (text: string) => {
    let line: Record<string, any>;
    try {
      line = JSON.parse(text);
    } catch {
      line = { msg: text };
    }
    logs.push(line);
    for (const w of watchers) if (typeof line.msg === 'string' && line.msg.startsWith(w.message)) w.resolve(line);
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  const waitForLog = (message: string) => {
    const seen = logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith(message));
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, any>>((resolve, reject) => {
      watchers.push({ message, resolve });
      void exited.then((code) => reject(new Error(`server exited (${code}) before logging "${message}"`)));
    });
  };
  const listening = await waitForLog('Server listening at http://127.0.0.1:');
  return { child, baseUrl: /(http:\/\/127\.0\.0\.1:\d+)/.exec(listening.msg)![1]!, waitForLog, logs, exited };
}

describe('graceful shutdown for a load balancer', () => {
  it('after SIGTERM new connections are refused (retryable elsewhere) while the in-flight request completes; exit 0', async () => {
    const server = await startServerProcess();
    try {
      // A connection kept alive by an earlier call: one that held close() open would end in
      // the 30 s grace's timeout (exit 1).
      expect((await call(server.baseUrl, 'GET', '/healthz')).status).toBe(200);
      const inFlight = call(server.baseUrl, 'GET', '/_test/slow');
      await server.waitForLog('slow request started');
      server.child.kill('SIGTERM');
      expect((await server.waitForLog('shutting down')).signal).toBe('SIGTERM');
      // Refused once the listener is closed; a connection that raced in before that gets
      // Fastify's 503 with `connection: close`, or, if it was still in the kernel's accept
      // backlog when the listener closed, a reset before any answer. A balancer retries each
      // of these (a reset, for an idempotent request); none is a 200 dropped.
      const late = await fetch(`${server.baseUrl}/healthz`, { headers: { connection: 'close' } }).catch((err: Error) => err);
      if (late instanceof Response) expect(late.status).toBe(503);
      else expect(['ECONNREFUSED', 'ECONNRESET']).toContain(((late as TypeError).cause as NodeJS.ErrnoException).code);
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'slow', done: true });
      expect(await server.exited).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 60_000);

  it('a request that outlives SHUTDOWN_GRACE_SECONDS is cut and the process exits 1 at the deadline', async () => {
    const server = await startServerProcess({ SHUTDOWN_GRACE_SECONDS: '0.25' });
    try {
      const stalled = call(server.baseUrl, 'GET', '/_test/stall').catch((err: Error) => err);
      await server.waitForLog('stalled request started');
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(1);
      await server.waitForLog('killed by timeout (250ms)');
      expect(await stalled).toBeInstanceOf(TypeError);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 60_000);
});

// One server for both: the first test leaves it running, quiet again; the second ends it.
describe('the log on stdout', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  });
  const requestLines = (id: string) => server.logs.filter((l) => l.msg === 'request completed' && l.reqId === id);

  it('a quiet server writes a request line without waiting for more lines to gather', async () => {
    const res = await call(server.baseUrl, 'GET', '/healthz');
    const id = res.headers.get('x-request-id')!;
    // Lines are written in batches, and at least every 100 ms: nothing else is logged here, so only the flush writes it.
    const deadline = Date.now() + 5_000;
    while (requestLines(id).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(requestLines(id)).toEqual([expect.objectContaining({ level: 30, method: 'GET', url: '/healthz', status: 200 })]);
  }, 60_000);

  it('lines still gathered when SIGTERM arrives are written before the process exits', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call(server.baseUrl, 'GET', '/healthz')).headers.get('x-request-id')!);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    for (const id of ids) expect(requestLines(id)).toHaveLength(1);
    expect(server.logs.filter((l) => l.msg === 'shutting down')).toHaveLength(1);
  }, 60_000);
});

/**
 * Processes for the multi-replica proof: HTTP replicas (src/main.ts) and batch workers
 * (src/worker-main.ts) as built (test/helpers/built.ts) with one shared configuration, and a
 * round-robin HTTP proxy standing in for a load balancer (a connection refused by one
 * replica is retried on the next, as balancers do; nothing else is retried).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { builtEntry, REPO } from './built.js';

export interface ClusterProcess {
  child: ChildProcess;
  /** For replicas: where it listens. */
  baseUrl: string | null;
  exited: Promise<number | string>;
  output(): string;
}

export async function spawnProcess(kind: 'replica' | 'worker', env: Record<string, string>): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [builtEntry(kind === 'replica' ? 'src/main.ts' : 'src/worker-main.ts')], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const ready = new Promise<string | null>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (listening) resolve(listening[1]!);
      if (kind === 'worker' && line.includes('sluice worker started')) resolve(null);
    });
    void exited.then((code) => reject(new Error(`${kind} exited (${code}) before it was ready:\n${output}`)));
  });
  return { child, baseUrl: await ready, exited, output: () => output };
}

export interface RoundRobinProxy {
  baseUrl: string;
  /** Requests answered by each target, by index. */
  served: number[];
  close(): Promise<void>;
}

/** `targets()` is read on every request, so replicas can be replaced while it runs. */
export async function startRoundRobinProxy(targets: () => (string | null)[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(Buffer.concat(chunks), 0));
    const forward = (body: Buffer, tries: number): void => {
      const list = targets();
      const index = next++ % list.length;
      const target = list[index];
      if (!target) {
        if (tries < list.length * 2) forward(body, tries + 1);
        else res.writeHead(502).end();
        return;
      }
      const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers, agent: false }, (answer) => {
        served[index] = (served[index] ?? 0) + 1;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED' && tries < list.length * 2) forward(body, tries + 1);
        else if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      upstream.end(body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    served,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

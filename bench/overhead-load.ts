/**
 * The overhead bench's load generator, in its own process (as a user's clients are): an
 * open loop at a constant arrival rate (request i sent at start + i/rate, whatever is
 * still outstanding, so a slow server meets a growing queue instead of a politely waiting
 * client), or closed loops at saturation (each connection sends its next request as soon
 * as its answer ends). On undici; each latency runs from sending to the answer's last byte.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const GENERATOR_SOURCE = `
const { Pool } = require(process.env.UNDICI_PATH);
const { url, headers, body, rate, connections, seconds, timeoutMs } = JSON.parse(process.env.LOAD_SPEC);
const target = new URL(url);
const pool = new Pool(target.origin, { connections, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
const latencies = [];
let sent = 0, settled = 0, non2xx = 0, errors = 0;
const start = performance.now();
const end = start + seconds * 1000;
const send = () => {
  const at = performance.now();
  sent++;
  return pool.request({ method: 'POST', path: target.pathname, headers, body }).then(
    async (res) => { await res.body.text(); if (res.statusCode === 200) latencies.push(performance.now() - at); else non2xx++; },
    () => { errors++; },
  ).finally(() => { settled++; });
};
const report = () => {
  const elapsed = (performance.now() - start) / 1000;
  // Exits once the answer is written: a pipe takes a large one in several writes.
  process.stdout.write(JSON.stringify({ sent, completed: latencies.length, non2xx, errors, elapsedSeconds: elapsed, latencies }) + '\\n', () =>
    pool.destroy().finally(() => process.exit(0)),
  );
};
if (rate > 0) {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const tick = () => {
    const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    while (sent < due) void send();
    if (sent < total) setTimeout(tick, 1);
    else { const wait = () => settled === total ? report() : setTimeout(wait, 5); wait(); }
  };
  tick();
} else {
  const loop = async () => { while (performance.now() < end) await send(); };
  Promise.all(Array.from({ length: connections }, loop)).then(report);
}
`;

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Requests per second, open loop; 0: closed loops at saturation, one per connection. */
  rate: number;
  connections: number;
  seconds: number;
  /** A request not answered in this long is an error. */
  timeoutMs: number;
}

export interface LoadOutcome {
  sent: number;
  completed: number;
  non2xx: number;
  errors: number;
  elapsedSeconds: number;
  /** Each 200 answer's time, ms. */
  latencies: number[];
}

const UNDICI_PATH = createRequire(import.meta.url).resolve('undici');

/** Runs one load in a process of its own and resolves with what it measured. */
export function runLoad(spec: LoadSpec): Promise<LoadOutcome> {
  const child = spawn(process.execPath, ['-e', GENERATOR_SOURCE], {
    env: { ...process.env, UNDICI_PATH, LOAD_SPEC: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    // 'close', not 'exit': a large answer may still be in the pipe when the process has exited.
    child.once('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line) as LoadOutcome);
      else reject(new Error(`the load generator exited with ${code}: ${out.slice(0, 500)}`));
    });
  });
}

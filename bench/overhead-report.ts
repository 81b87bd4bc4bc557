/**
 * docs/performance.md and its chart, written from one run of the overhead bench
 * (`--write-docs`), never by hand. The chart is a small SVG drawn here: a line per server of
 * its p50 overhead against the arrival rate, which needs no chart library.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_LATENCY_MS } from './overhead-servers.js';

export interface OverheadPoint {
  server: string;
  stream: boolean;
  /** Requests/s sent (open loop); 0 for the saturation run. */
  rate: number;
  achievedRps: number;
  /** Latency − ENGINE_LATENCY_MS, ms. */
  p50: number;
  p95: number;
  p99: number;
  errorRate: number;
  cpuMicrosPerRequest: number;
  rssMb: number;
}

export interface OverheadRun {
  points: OverheadPoint[];
  rates: number[];
  seconds: number;
  saturationConnections: number;
  loadBefore: string;
  loadAfter: string;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHART = 'performance-overhead.svg';
const COLORS = ['#1f77b4', '#7f7f7f', '#d62728', '#2ca02c', '#9467bd'];

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');

function table(points: readonly OverheadPoint[]): string {
  const rows = points.map((p) => {
    const at = p.rate > 0 ? String(p.rate) : `saturation, ${p.achievedRps.toFixed(0)}`;
    const served = p.errorRate >= 1 ? '–' : p.achievedRps.toFixed(0);
    return `| ${p.server} | ${at} | ${served} | ${ms(p.p50)} | ${ms(p.p95)} | ${ms(p.p99)} | ${(p.errorRate * 100).toFixed(2)}% | ${Number.isFinite(p.cpuMicrosPerRequest) ? p.cpuMicrosPerRequest.toFixed(0) : '–'} | ${p.rssMb.toFixed(0)} |`;
  });
  return ['| server | rate (req/s) | served (req/s) | overhead p50 (ms) | p95 | p99 | errors | CPU per request (µs) | RSS (MB) |', '| - | - | - | - | - | - | - | - | - |', ...rows].join('\n');
}

/** Overhead p50 (non-streamed) against the rate, one line per server. */
export function overheadChart(points: readonly OverheadPoint[], rates: readonly number[]): string {
  const [width, height, left, right, top, bottom] = [640, 360, 56, 180, 20, 44];
  const plotted = points.filter((p) => !p.stream && p.rate > 0 && p.errorRate <= 0.01 && Number.isFinite(p.p50));
  const servers = [...new Set(points.map((p) => p.server))];
  const yMax = Math.max(1, ...plotted.map((p) => p.p50)) * 1.1;
  const x = (rate: number) => left + (rates.indexOf(rate) / Math.max(1, rates.length - 1)) * (width - left - right);
  const y = (value: number) => top + (1 - Math.max(0, value) / yMax) * (height - top - bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<line x1="${left}" y1="${y(0)}" x2="${width - right}" y2="${y(0)}" stroke="black"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${y(0)}" stroke="black"/>`,
  ];
  for (const rate of rates) parts.push(`<text x="${x(rate)}" y="${y(0) + 16}" text-anchor="middle">${rate}</text>`);
  for (let i = 0; i <= 4; i++) {
    const value = (yMax * i) / 4;
    parts.push(`<line x1="${left}" y1="${y(value)}" x2="${width - right}" y2="${y(value)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end">${value.toFixed(value < 10 ? 1 : 0)}</text>`);
  }
  parts.push(`<text x="${(left + width - right) / 2}" y="${height - 8}" text-anchor="middle">arrival rate (requests/s)</text>`);
  parts.push(`<text transform="translate(14 ${(top + y(0)) / 2}) rotate(-90)" text-anchor="middle">overhead p50 (ms)</text>`);
  servers.forEach((server, i) => {
    const color = COLORS[i % COLORS.length]!;
    const own = plotted.filter((p) => p.server === server);
    if (own.length > 0) {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${own.map((p) => `${x(p.rate).toFixed(1)},${y(p.p50).toFixed(1)}`).join(' ')}"/>`);
      for (const p of own) parts.push(`<circle cx="${x(p.rate).toFixed(1)}" cy="${y(p.p50).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    parts.push(`<rect x="${width - right + 12}" y="${top + i * 20}" width="12" height="12" fill="${color}"/>`);
    parts.push(`<text x="${width - right + 30}" y="${top + i * 20 + 10}">${server.replace(/&/g, '&amp;')}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function machine(run: OverheadRun): string {
  const cpus = os.cpus();
  const overloaded = Math.max(Number(run.loadBefore.split(' ')[0]), Number(run.loadAfter.split(' ')[0])) > cpus.length;
  return [
    ...(overloaded
      ? [`- **overloaded during this run** (a load average above its ${cpus.length} cores): the figures below measure the wait for a core as much as the servers; run the bench again on a quiet machine before comparing them with others`]
      : []),
    `- ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GB of memory, ${os.type()} ${os.release()}`,
    `- Node ${process.versions.node}; every server, the mock engine and the load generator share these cores`,
    `- load average (1, 5, 15 min) ${run.loadBefore} before the run, ${run.loadAfter} after it`,
    `- run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${run.seconds} s per rate`,
  ].join('\n');
}

function markdown(run: OverheadRun): string {
  const plain = run.points.filter((p) => !p.stream);
  const streamed = run.points.filter((p) => p.stream);
  const failedStreams = [...new Set(streamed.filter((p) => p.errorRate >= 1).map((p) => p.server))];
  return `# Performance

<!-- Generated by \`npm run bench -- overhead --write-docs\` (bench/overhead.bench.ts, bench/overhead-report.ts). Do not edit: run the bench again. -->

Read this page to learn what Sluice adds to the time of a call, against a bare proxy and
Portkey's OSS gateway on the same machine, how that was measured, and how to measure it
yourself. This page is generated by the bench from one run; it is never edited by hand.

## Method

- **A mock engine** answers every chat completion after a fixed ${ENGINE_LATENCY_MS} ms: the whole
  answer then, or, streamed, the first chunk at once and the rest then. A gateway's
  **overhead** is its latency (from sending the request to the answer's last byte) less ${ENGINE_LATENCY_MS} ms,
  at p50, p95 and p99.
- **The servers**, each in its own process, as users run them:
  - **Sluice** (\`dist/src/main.js\`, as \`npm start\` runs it) with what a deployment runs on
    every call: API key authentication, a credit hold before the call and a usage record
    and debit committed before the answer (SQLite, and PostgreSQL in its own table), the
    per-key rate limit (checked, never reached), metrics; \`LOG_LEVEL=warn\`.
  - **A bare proxy**: Fastify and undici, parsing the request and sending the engine's answer
    back, nothing else (the floor for a Node proxy).
  - **Portkey's OSS gateway** (\`@portkey-ai/gateway\` from npm, its published build, an
    \`openai\` provider at a custom host). Its published build answers every streamed call
    500 on Node (it adds its headers to the engine's \`fetch\` response, whose headers are
    immutable; its log says \`TypeError: immutable\`). The bench preloads
    \`bench/portkey-stream-fix.mjs\`, which hands a streamed response on as a new
    \`Response\` over the same body, as the fix proposed upstream does; non-streamed
    responses pass untouched. It runs on \`@hono/node-server\` 1.14.2 (an override in
    \`package.json\`): the later versions npm installs by default fail its non-streamed
    calls the same way.
- **The load**, from a generator in its own process (undici): constant arrival rates of
  ${run.rates.join(', ')} requests/s, each for ${run.seconds} s, open loop (a request leaves on
  schedule whatever is still outstanding), then a saturation run of ${run.saturationConnections} closed loops.
  A server that serves under 90% of a rate or fails over 1% of its calls is not sent the
  higher ones. **CPU per request** is the server process's CPU (all threads) over the calls it
  served; **RSS** is read after each run.

## This machine

${machine(run)}

## Overhead

![Overhead p50 against the arrival rate, not streamed](${CHART})

Not streamed:

${table(plain)}

Streamed (to the last byte):

${table(streamed)}
${failedStreams.length > 0 ? `\nStreams failed on ${failedStreams.join(', ')} in this install: more than 1% of calls failed, so no figure is shown.\n` : ''}
## Reproduce

\`\`\`sh
npm ci && npm run bench -- overhead              # prints every figure
npm run bench -- overhead --write-docs           # also rewrites this page and its chart
\`\`\`

PostgreSQL rows need a server at \`SLUICE_TEST_POSTGRES_URL\` (default
\`postgres://postgres@127.0.0.1:5432/test\`). \`BENCH_OVERHEAD_RATES\` (\`100,500,1000,2000\`),
\`BENCH_SECONDS\` (5) and \`BENCH_OVERHEAD_CONNECTIONS\` (256) change the load.

## What it does not measure

- A network: everything runs on loopback, on one machine, so the load generator and the
  engine take CPU from the server under test; a shared machine's load (above) moves the figures.
- Real engines: the mock's answer is small and fixed; token streaming over seconds, large
  bodies and tool calls are not here.
- Features a deployment may add: routing across several engines, retries and fallbacks,
  hosted-provider translation, tracing.
- Portkey's own features (caching, guardrails, its hosted control plane): it runs as a plain
  pass-through here, as the bare proxy does.
- One run: the tables are one run's figures, not the median of many.
`;
}

/** Writes docs/performance.md and its chart from `run`; returns the paths written. */
export function writeOverheadDocs(run: OverheadRun): string[] {
  const doc = path.join(ROOT, 'docs/performance.md');
  const chart = path.join(ROOT, 'docs', CHART);
  writeFileSync(chart, overheadChart(run.points, run.rates));
  writeFileSync(doc, markdown(run));
  return [doc, chart];
}

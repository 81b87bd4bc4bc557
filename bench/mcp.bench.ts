/**
 * What an MCP `chat` tool call costs over the same REST call: p50 round trip of
 * `tools/call` on `/mcp` (2026-07-28, as `@modelcontextprotocol/client` sends it) minus
 * p50 of `POST /v1/chat/completions` with the same body and API key (target: ≤ 0.3 ms).
 * The server (processes.ts `startSluice`, as `npm start` runs it) and the fake engine
 * (test/fixtures/fake-engine.ts) each run in their own process; this process sends one
 * request at a time on one keep-alive connection, REST and MCP calls interleaved one by
 * one so drifting load weighs on both alike.
 *
 * Every server first serves BENCH_WARMUP pairs (default 2000), interleaved the same way and
 * not counted, so both paths are measured once compiled (JIT) and their caches filled; the
 * warm-up's own figure is printed beside the result. Then BENCH_ROUNDS rounds (default 7) of
 * BENCH_CALLS pairs (default 400); a round's figure is p50(MCP) − p50(REST) over its pairs,
 * the result the median over rounds. Each round also reads the server process's CPU (user +
 * system, from /proc) per pair.
 *
 * With BENCH_PROFILE_DIR set, each server writes a V8 CPU profile into a folder of its own there
 * (100 µs sampling) as it exits.
 *
 * BENCH_TREES=<before-dir>,<after-dir> runs one server per checkout (each with its
 * node_modules) on the same engine, rounds alternating between them (the order flipping
 * every round), and prints each tree's rows.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { median } from './measure.js';
import { startEngineProcess } from '../test/helpers/engine-process.js';
import { startSluice, type SluiceProcess } from './processes.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2000);
const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TREES = (process.env.BENCH_TREES ?? HERE).split(',').map((t) => path.resolve(t));
const ARGS = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16 };
const VERSION = '2026-07-28';

/** A tools/call as the 2.x client sends it on 2026-07-28: the protocol envelope in `params._meta`, the method in a header. */
const mcpBody = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'chat',
      arguments: ARGS,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** One round's figures: p50 of each call (ms) and the server's CPU per pair (µs). */
interface RoundFigures {
  rest: number;
  mcp: number;
  cpu: number;
}

interface Side {
  tree: string;
  server: SluiceProcess;
  pool: Pool;
  /** One round of `pairs` interleaved REST and MCP calls. */
  round(pairs: number): Promise<RoundFigures>;
}

/** The server of the checkout `tree` in its own process, with a project and key. */
async function startSide(tree: string, engineUrl: string): Promise<Side> {
  const yaml = `models:\n  gpt-oss-120b: { backend: openai, base_url: ${engineUrl} }\n`;
  const env = { SLUICE_WORKERS: 'off', RATE_LIMIT_RPM: '100000000' };
  const server = await startSluice(`mcp-${path.basename(tree)}`, env, yaml, { root: tree, profileIntervalMicros: 100 });
  const { key } = await server.newTenant(1_000_000);
  const pool = new Pool(server.baseUrl, { connections: 1, pipelining: 1 });
  const post = async (p: string, headers: Record<string, string>, body: string) => {
    const res = await pool.request({ method: 'POST', path: p, headers, body });
    return { status: res.statusCode, text: await res.body.text() };
  };

  const restHeaders = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const mcpHeaders = { ...restHeaders, accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'chat' };
  const restBody = JSON.stringify(ARGS);
  let id = 0;
  const rest = async () => {
    const res = await post('/v1/chat/completions', restHeaders, restBody);
    if (res.status !== 200) throw new Error(`REST chat answered ${res.status}: ${res.text}`);
  };
  const mcp = async () => {
    const res = await post('/mcp', mcpHeaders, mcpBody(++id));
    if (res.status !== 200 || !res.text.includes('"structuredContent"') || res.text.includes('"isError":true')) throw new Error(`MCP chat answered ${res.status}: ${res.text}`);
  };
  const timed = async (call: () => Promise<void>) => {
    const t = performance.now();
    await call();
    return performance.now() - t;
  };
  /** REST and MCP back to back, the order alternating, so load drifts weigh on both alike. */
  const round = async (pairs: number): Promise<RoundFigures> => {
    const restTimes: number[] = [];
    const mcpTimes: number[] = [];
    const cpuBefore = server.cpuMicros();
    for (let i = 0; i < pairs; i++) {
      if (i % 2 === 0) {
        restTimes.push(await timed(rest));
        mcpTimes.push(await timed(mcp));
      } else {
        mcpTimes.push(await timed(mcp));
        restTimes.push(await timed(rest));
      }
    }
    return { rest: median(restTimes), mcp: median(mcpTimes), cpu: (server.cpuMicros() - cpuBefore) / pairs };
  };
  return { tree, server, pool, round };
}

async function stopSide(side: Side): Promise<void> {
  await side.pool.close();
  await side.server.stop();
}

/** The rows of one tree: medians over rounds, every round's overhead and the warm-up's. */
function rowsOf(side: Side, rounds: RoundFigures[], warmup: RoundFigures, load: string): BenchRow[] {
  const label = TREES.length > 1 ? ` [${side.tree}]` : '';
  const overheads = rounds.map((r) => r.mcp - r.rest);
  const rest = median(rounds.map((r) => r.rest));
  const mcp = median(rounds.map((r) => r.mcp));
  return [
    { name: `REST chat p50${label}`, value: rest, unit: 'ms', note: `${CALLS} interleaved pairs per round, median of ${ROUNDS} rounds after ${WARMUP} warm-up pairs` },
    { name: `MCP chat p50${label}`, value: mcp, unit: 'ms' },
    {
      name: `MCP − REST p50${label}`,
      value: median(overheads),
      unit: 'ms',
      note: `target ≤ 0.3; rounds ${overheads.map((o) => o.toFixed(3)).join(', ')}; warm-up ${(warmup.mcp - warmup.rest).toFixed(3)}; load ${load}`,
    },
    { name: `MCP / REST p50${label}`, value: mcp / rest, unit: 'ratio' },
    { name: `server CPU per REST + MCP pair${label}`, value: median(rounds.map((r) => r.cpu)), unit: 'µs', note: `rounds ${rounds.map((r) => r.cpu.toFixed(0)).join(', ')}` },
  ];
}

export default async function mcpBench(): Promise<BenchRow[]> {
  const loadAtStart = loadAverage();
  const engine = await startEngineProcess('healthy');
  const sides: Side[] = [];
  try {
    for (const tree of TREES) sides.push(await startSide(tree, engine.baseUrl));
    const warmups: RoundFigures[] = [];
    for (const side of sides) warmups.push(await side.round(WARMUP));
    const rounds = sides.map((): RoundFigures[] => []);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? sides.keys() : [...sides.keys()].reverse();
      for (const i of order) rounds[i]!.push(await sides[i]!.round(CALLS));
    }
    const load = `${loadAtStart} at the start, ${loadAverage()} at the end`;
    return sides.flatMap((side, i) => rowsOf(side, rounds[i]!, warmups[i]!, load));
  } finally {
    for (const side of sides) await stopSide(side);
    await engine.kill();
  }
}

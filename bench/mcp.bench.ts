/**
 * What an MCP `chat` tool call costs over the same REST call: p50 round trip of
 * `tools/call` on `/mcp` (2026-07-28, as `@modelcontextprotocol/client` sends it) minus
 * p50 of `POST /v1/chat/completions` with the same body and API key (target: ≤ 0.3 ms).
 * The server (src/main.ts) and the fake engine (test/fixtures/fake-engine.ts) each run in
 * their own process; this process sends one request at a time on one keep-alive
 * connection, REST and MCP calls interleaved one by one so drifting load weighs on both alike.
 * BENCH_CALLS requests per round (default 400), BENCH_ROUNDS rounds (default 7).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { median } from './measure.js';
import { spawnProcess } from '../test/helpers/cluster.js';
import { startEngineProcess } from '../test/helpers/engine-process.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ADMIN = 'bench-admin-token-0123456789';
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

const p50 = (xs: readonly number[]) => median(xs);

export default async function mcpBench(): Promise<BenchRow[]> {
  const engine = await startEngineProcess('healthy');
  const dir = mkdtempSync(path.join(tmpdir(), 'sluice-bench-mcp-'));
  const config = path.join(dir, 'sluice.yaml');
  writeFileSync(config, `models:\n  gpt-oss-120b: { backend: openai, base_url: ${engine.baseUrl} }\n`);
  const server = await spawnProcess('replica', {
    SLUICE_CONFIG: config,
    DATA_DIR: dir,
    SLUICE_ADMIN_TOKEN: ADMIN,
    SLUICE_WORKERS: 'off',
    RATE_LIMIT_RPM: '100000000',
    FREE_CREDITS_USD: '1000000',
  });
  const pool = new Pool(server.baseUrl!, { connections: 1, pipelining: 1 });
  try {
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const post = async (p: string, headers: Record<string, string>, body: string) => {
      const res = await pool.request({ method: 'POST', path: p, headers, body });
      return { status: res.statusCode, text: await res.body.text() };
    };
    const project = JSON.parse((await post('/admin/v1/projects', admin, JSON.stringify({ name: 'bench' }))).text) as { id: string };
    const { key } = JSON.parse((await post(`/admin/v1/projects/${project.id}/keys`, admin, '{}')).text) as { key: string };

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
    /** One round: CALLS pairs, REST and MCP back to back (the order alternating), so load drifts weigh on both alike. */
    const round = async () => {
      const restTimes: number[] = [];
      const mcpTimes: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        if (i % 2 === 0) {
          restTimes.push(await timed(rest));
          mcpTimes.push(await timed(mcp));
        } else {
          mcpTimes.push(await timed(mcp));
          restTimes.push(await timed(rest));
        }
      }
      return { rest: p50(restTimes), mcp: p50(mcpTimes) };
    };
    // Warm both paths (JIT, the tool list, the key cache).
    await round();
    const restP50: number[] = [];
    const mcpP50: number[] = [];
    const overheads: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { rest: a, mcp: b } = await round();
      restP50.push(a);
      mcpP50.push(b);
      overheads.push(b - a);
    }
    return [
      { name: 'REST chat p50', value: median(restP50), unit: 'ms', note: `${CALLS} interleaved pairs per round, median of ${ROUNDS} rounds` },
      { name: 'MCP chat p50', value: median(mcpP50), unit: 'ms' },
      { name: 'MCP − REST p50', value: median(overheads), unit: 'ms', note: `target ≤ 0.3; rounds ${overheads.map((o) => o.toFixed(3)).join(', ')}` },
      { name: 'MCP / REST p50', value: median(mcpP50) / median(restP50), unit: 'ratio' },
    ];
  } finally {
    await pool.close();
    server.child.kill('SIGTERM');
    await server.exited;
    await engine.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The long fuzz run: `npm run fuzz` (FUZZ_RUNS, default 10000; FUZZ_SEED to replay), of
 * the HTTP surface, then of the MCP endpoint, then (a tenth as many sessions) of the
 * Responses WebSocket.
 * Prints the request count by status, or the first failing request, shrunk.
 */
import { fuzzHttpSurface } from './http-surface.js';
import { fuzzMcpSurface } from './mcp-surface.js';
import { describeStats, startFuzzEnv } from './fuzz-env.js';
import { describeSocketStats, fuzzSocketSurface } from './socket-surface.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 10_000);
const seed = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
const { env, target } = await startFuzzEnv();
try {
  console.log(`fuzzing ${numRuns} requests, seed ${seed}`);
  const stats = await fuzzHttpSurface(target, { numRuns, seed });
  console.log(`ok: ${describeStats(stats)}`);
  console.log(`fuzzing ${numRuns} MCP requests, seed ${seed}`);
  const mcp = await fuzzMcpSurface(target, { numRuns, seed });
  console.log(`ok: ${describeStats(mcp)}`);
  const socketRuns = Math.max(1, Math.floor(numRuns / 10));
  console.log(`fuzzing ${socketRuns} Responses WebSocket sessions, seed ${seed}`);
  console.log(`ok: ${describeSocketStats(await fuzzSocketSurface(target, { numRuns: socketRuns, seed }))}`);
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await env.close();
}

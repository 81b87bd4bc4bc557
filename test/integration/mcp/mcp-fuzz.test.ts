/** The bounded fuzz run of the MCP endpoint (see test/fuzz/mcp-surface.ts; `npm run fuzz` runs a long one). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FuzzTarget } from '../../fuzz/http-surface.js';
import { fuzzMcpSurface } from '../../fuzz/mcp-surface.js';
import { startFuzzEnv } from '../../fuzz/fuzz-env.js';
import type { InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let target: FuzzTarget;

beforeAll(async () => {
  ({ env, target } = await startFuzzEnv());
});
afterAll(() => env.close());

it('300 random MCP requests: no server fault, every answer has x-request-id, every HTTP error is a JSON-RPC error', { timeout: 120_000 }, async () => {
  const stats = await fuzzMcpSurface(target, { numRuns: 300 });
  expect(stats.requests).toBeGreaterThanOrEqual(300);
  expect(stats.byStatus.get(200) ?? 0).toBeGreaterThan(0);
});

/** The bounded fuzz run of the Responses WebSocket (see test/fuzz/socket-surface.ts; `npm run fuzz` runs a long one). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FuzzTarget } from '../../fuzz/http-surface.js';
import { fuzzSocketSurface } from '../../fuzz/socket-surface.js';
import { startFuzzEnv } from '../../fuzz/fuzz-env.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import type { InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let target: FuzzTarget;

beforeAll(async () => {
  ({ env, target } = await startFuzzEnv());
});
afterAll(() => env.close());

it('200 random WebSocket sessions: no server fault, every message answered; the server keeps serving', { timeout: 120_000 }, async () => {
  const stats = await fuzzSocketSurface(target, { numRuns: 200 });
  expect(stats.runs).toBeGreaterThanOrEqual(200);
  // The fuzz reaches past validation to the engine, and past the framing to `ws`'s refusals.
  expect(stats.outcomes.get('completed') ?? 0).toBeGreaterThan(0);
  expect(stats.outcomes.get('error:400') ?? 0).toBeGreaterThan(0);
  const socket = await openTestSocket(wsUrlOf(target.baseUrl), { headers: { authorization: `Bearer ${target.apiKey}` } });
  expect((await socket.turn({ type: 'response.create', model: 'gpt-oss-120b', input: 'still serving?' })).at(-1)!.type).toBe('response.completed');
  await socket.close();
  const health = await fetch(`${target.baseUrl}/healthz`);
  expect(health.status).toBe(200);
});

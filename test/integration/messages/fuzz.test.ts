/**
 * A bounded fuzz of Anthropic's Messages routes past authentication (test/fuzz/http-surface.ts
 * `messagesRequestArbitrary`): near-valid bodies with every field possibly wrong, blocks of
 * known and unknown types. No server fault (0 × 500), every error in Anthropic's envelope.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzHttpSurface, messagesRequestArbitrary, type FuzzTarget } from '../../fuzz/http-surface.js';
import { startFuzzEnv } from '../../fuzz/fuzz-env.js';
import type { InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let target: FuzzTarget;

beforeAll(async () => {
  ({ env, target } = await startFuzzEnv());
});
afterAll(() => env.close());

it('400 random Messages requests: no server fault, every error in Anthropic envelope', { timeout: 120_000 }, async () => {
  const stats = await fuzzHttpSurface(target, { numRuns: 400, requests: messagesRequestArbitrary });
  expect(stats.requests).toBeGreaterThanOrEqual(400);
  expect(stats.byStatus.get(500) ?? 0).toBe(0);
  // The fuzz reaches past validation to the engine, not only the 400 paths.
  expect(stats.byStatus.get(200) ?? 0).toBeGreaterThan(0);
});

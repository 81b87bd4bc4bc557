/** The bounded fuzz run of the HTTP surface (see test/fuzz/http-surface.ts; `npm run fuzz` for a long one). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzHttpSurface, type FuzzTarget } from '../../fuzz/http-surface.js';
import { startFuzzEnv } from '../../fuzz/fuzz-env.js';
import type { InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let target: FuzzTarget;

beforeAll(async () => {
  ({ env, target } = await startFuzzEnv());
});
afterAll(() => env.close());

it('400 random requests: no server fault, every answer has x-request-id, every error is the envelope', { timeout: 120_000 }, async () => {
  const stats = await fuzzHttpSurface(target, { numRuns: 400 });
  expect(stats.requests).toBeGreaterThanOrEqual(400);
  // The fuzz reaches past authentication and validation, not only the 4xx paths.
  expect(stats.byStatus.get(200) ?? 0).toBeGreaterThan(0);
});

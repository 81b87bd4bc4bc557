/** What upstreams count past the input estimate, learned per model (src/domain/billing/input-overhead.ts). */
import { expect, it } from 'vitest';
import { InputOverheads } from '../../src/domain/billing/input-overhead.js';
import type { MeteredCall } from '../../src/domain/billing/meter.js';

const call = (over: Partial<MeteredCall> = {}): MeteredCall => ({
  model: 'm', route: '/v1/chat/completions', requestId: 'req_1', inputTokens: 18, maxOutputTokens: 7, ...over,
});
const usage = (inputTokens: number, over = {}) => ({ inputTokens, outputTokens: 7, status: 200, ...over });

it('adds the largest excess seen for a model to its later estimates, and nothing to other models', () => {
  const overheads = new InputOverheads();
  expect(overheads.estimateOf(call())).toEqual(call());
  overheads.observe(call(), usage(11)); // below the estimate: nothing to learn
  expect(overheads.estimateOf(call()).inputTokens).toBe(18);
  overheads.observe(call(), usage(40));
  const estimated = overheads.estimateOf(call());
  expect(estimated.inputTokens).toBe(40);
  expect(overheads.estimateOf(call({ model: 'other' })).inputTokens).toBe(18);
  // Observed against the raised estimate: only what still exceeds it is added.
  overheads.observe(estimated, usage(45));
  expect(overheads.estimateOf(call()).inputTokens).toBe(45);
  overheads.observe(overheads.estimateOf(call()), usage(30));
  expect(overheads.estimateOf(call()).inputTokens).toBe(45);
});

it('learns nothing from fixed estimates, fixed costs, or an excess no template explains', () => {
  const overheads = new InputOverheads();
  overheads.observe(call({ estimateMicros: 100 }), usage(500));
  overheads.observe(call(), usage(500, { costMicros: 3 }));
  overheads.observe(call(), usage(18 + 5_000));
  expect(overheads.estimateOf(call()).inputTokens).toBe(18);
  expect(overheads.estimateOf(call({ estimateMicros: 100 }))).toEqual(call({ estimateMicros: 100 }));
});

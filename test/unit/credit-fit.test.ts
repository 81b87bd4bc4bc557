/** What a call may hold out of some credit (src/domain/billing/credit-fit.ts), with the real price function. */
import { describe, expect, it } from 'vitest';
import { CreditFit, DEFAULT_CAP_POLICY } from '../../src/domain/billing/credit-fit.js';
import type { MeteredCall } from '../../src/domain/billing/meter.js';
import { costMicros, type TokenPrice } from '../../src/domain/shared/money.js';

const call = (over: Partial<MeteredCall> = {}): MeteredCall => ({
  model: 'm',
  route: '/v1/chat/completions',
  requestId: 'req_1',
  inputTokens: 13,
  maxOutputTokens: 4096,
  outputCapExplicit: false,
  ...over,
});
const fitOf = (c: MeteredCall, price: TokenPrice, policy = DEFAULT_CAP_POLICY) =>
  new CreditFit(c, (input, output) => costMicros(price, input, output), policy);
const THOUSAND = { inputPerMillionUsd: 1000, outputPerMillionUsd: 1000 };

describe('CreditFit', () => {
  it('holds the worst case when it fits, else lowers an unset cap to what the room affords', () => {
    const fit = fitOf(call(), THOUSAND);
    expect(fit.within(5_000_000)).toEqual({ micros: 4_109_000 });
    expect(fit.within(280_000)).toEqual({ micros: 280_000, outputCap: 267 });
    expect(fit.within(280_999)).toEqual({ micros: 280_000, outputCap: 267 });
    expect(fit.within(29_000)).toEqual({ micros: 29_000, outputCap: 16 });
    expect(fit.within(28_999)).toBeNull(); // 15 tokens: below the minimum
  });

  it('never lowers an explicit cap, a fixed estimate, or with lowering off', () => {
    expect(fitOf(call({ outputCapExplicit: true }), THOUSAND).within(280_000)).toBeNull();
    expect(fitOf(call({ estimateMicros: 300_000 }), THOUSAND).within(280_000)).toBeNull();
    expect(fitOf(call(), THOUSAND, { ...DEFAULT_CAP_POLICY, lowerOutputCap: false }).within(280_000)).toBeNull();
  });

  it('the minimum is the smaller of the setting and the call’s own default cap', () => {
    const fit = fitOf(call({ maxOutputTokens: 7 }), THOUSAND);
    expect(fit.minimumCap).toBe(7);
    expect(fit.within(19_999)).toBeNull();
    expect(fit.within(20_000)).toEqual({ micros: 20_000 });
  });

  it('finds the largest affordable cap under rounding up to whole micro-dollars', () => {
    // 0.3 µ$ a token out, 0.1 in: cost = ceil(0.1 × 13 + 0.3 × n).
    const fit = fitOf(call(), { inputPerMillionUsd: 0.1, outputPerMillionUsd: 0.3 });
    for (const room of [2, 3, 10, 100, 1000]) {
      const cap = fit.affordableCap(room);
      expect(costMicros({ inputPerMillionUsd: 0.1, outputPerMillionUsd: 0.3 }, 13, cap)).toBeLessThanOrEqual(room);
      if (cap < 4096) expect(costMicros({ inputPerMillionUsd: 0.1, outputPerMillionUsd: 0.3 }, 13, cap + 1)).toBeGreaterThan(room);
    }
    expect(fit.affordableCap(1)).toBe(0); // the input alone (1.3 → 2 µ$) does not fit
  });

  it('a free output price affords the whole default cap once the input fits', () => {
    const fit = fitOf(call(), { inputPerMillionUsd: 1000, outputPerMillionUsd: 0 });
    expect(fit.within(13_000)).toEqual({ micros: 13_000 });
    expect(fit.within(12_999)).toBeNull();
  });

  it('names the worst case, the free balance and the affordable cap in its refusal', () => {
    const refusal = fitOf(call({ maxOutputTokens: 1000, outputCapExplicit: true }), THOUSAND).refusal(280_000);
    expect(refusal.kind).toBe('insufficient_quota');
    expect(refusal.code).toBe('insufficient_quota');
    expect(refusal.message).toBe(
      'Insufficient credit: this request may cost up to 1.013000 USD (13 input tokens at most, an output cap of 1000 tokens), ' +
        'and the free balance (the balance less the credit held by calls in flight) is 0.280000 USD, ' +
        'which affords an output cap of at most 267 tokens. Lower the output cap, or add credit.',
    );
    // Credit held beyond the balance reads as none free, not a negative amount.
    expect(fitOf(call({ estimateMicros: 5 }), THOUSAND).refusal(-3).message).toBe(
      'Insufficient credit: this request may cost up to 0.000005 USD, and the free balance (the balance less the credit held by calls in flight) is 0.000000 USD.',
    );
  });
});

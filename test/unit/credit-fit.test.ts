/** What a call may hold out of some credit (src/domain/billing/credit-fit.ts), with the real price function. */
import { describe, expect, it } from 'vitest';
import { CreditFit, DEFAULT_CAP_POLICY } from '../../src/domain/billing/credit-fit.js';
import { HeldByOtherCalls, waitingForHeldCredit } from '../../src/domain/billing/meter.js';
import { AppError } from '../../src/domain/shared/errors.js';
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

  it('holds the default allowance before lowering to the room, and lowers it only when the room cannot cover it', () => {
    const fit = fitOf(call(), THOUSAND, { ...DEFAULT_CAP_POLICY, defaultHoldTokens: 100 });
    expect(fit.allowance).toBe(100);
    expect(fit.within(4_109_000)).toEqual({ micros: 4_109_000 });
    expect(fit.within(4_108_999)).toEqual({ micros: 113_000, outputCap: 100 });
    expect(fit.within(113_000)).toEqual({ micros: 113_000, outputCap: 100 });
    expect(fit.within(112_999)).toEqual({ micros: 112_000, outputCap: 99 });
    // The model's own default cap when it is smaller than the setting.
    expect(fitOf(call({ maxOutputTokens: 50 }), THOUSAND, { ...DEFAULT_CAP_POLICY, defaultHoldTokens: 100 }).allowance).toBe(50);
  });

  it('a balance pays for a call it covers the input and one output token of; an explicit cap must fit whole', () => {
    const fit = fitOf(call(), THOUSAND);
    expect(fit.leastMicros).toBe(14_000);
    expect(fit.payableFrom(14_000)).toBe(true);
    expect(fit.payableFrom(13_999)).toBe(false);
    // Beside other calls the minimum applies; alone, one token is enough.
    expect(fit.within(20_000)).toBeNull();
    expect(fit.within(20_000, 1)).toEqual({ micros: 20_000, outputCap: 7 });
    const explicit = fitOf(call({ maxOutputTokens: 100, outputCapExplicit: true }), THOUSAND);
    expect(explicit.leastMicros).toBe(113_000);
    expect(explicit.payableFrom(112_999)).toBe(false);
  });

  it('names what the call needs and the balance when the balance cannot pay, and the wait when calls in flight held it', () => {
    const fit = fitOf(call(), THOUSAND);
    expect(fit.shortOfBalance(13_000).message).toBe(
      'Insufficient credit: this request needs at least 0.014000 USD (13 input tokens at most and one output token), and the balance is 0.013000 USD. Add credit.',
    );
    const waited = fit.heldTooLong(50_000, -2, 2000);
    expect(waited).toMatchObject({ kind: 'insufficient_quota', code: 'insufficient_quota' });
    expect(waited.message).toBe(
      'Insufficient credit: this request needs at least 0.014000 USD (13 input tokens at most and one output token), and the balance is 0.050000 USD, ' +
        'but calls in flight held all but 0.000000 USD of it for the 2000 ms this request waited. Retry later, or add credit.',
    );
    expect(fitOf(call({ maxOutputTokens: 100, outputCapExplicit: true }), THOUSAND).heldTooLong(200_000, 50_000, 10).message).toBe(
      'Insufficient credit: this request may cost up to 0.113000 USD, and the balance is 0.200000 USD, ' +
        'but calls in flight held all but 0.050000 USD of it for the 10 ms this request waited. Retry later, or add credit.',
    );
  });
});

describe('waitingForHeldCredit', () => {
  const held = (released: () => Promise<void>) =>
    new AppError('insufficient_quota', 'held', {
      code: 'insufficient_quota',
      cause: new HeldByOtherCalls(released, (waitedMs) => new AppError('insufficient_quota', `waited ${waitedMs} ms`)),
    });

  it('tries again after each release until the attempt succeeds', async () => {
    let attempts = 0;
    let releases = 0;
    const result = await waitingForHeldCredit(async () => {
      attempts += 1;
      if (attempts < 3) throw held(async () => void (releases += 1));
      return 'held';
    }, 1_000);
    expect(result).toBe('held');
    expect(attempts).toBe(3);
    expect(releases).toBe(2);
  });

  it('gives the timed-out refusal once the wait ran out, and any other error at once', async () => {
    await expect(waitingForHeldCredit(() => Promise.reject(held(() => new Promise((r) => setTimeout(r, 30)))), 50)).rejects.toThrow('waited 50 ms');
    let attempts = 0;
    const other = new AppError('insufficient_quota', 'the balance cannot pay');
    await expect(
      waitingForHeldCredit(() => {
        attempts += 1;
        return Promise.reject(other);
      }, 1_000),
    ).rejects.toBe(other);
    expect(attempts).toBe(1);
  });
});

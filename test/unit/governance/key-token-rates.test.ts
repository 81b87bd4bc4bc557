/**
 * A key's tokens per minute (src/domain/billing/key-token-rates.ts) on the in-memory
 * windows, with a moved clock: the estimate is checked against the minute's settled
 * tokens, a call without a cap is lowered, the refusals name the figures, a batch line's
 * refusal waits for the minute to end, and the minute frees at its end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KeyTokenRates } from '../../../src/domain/billing/key-token-rates.js';
import { LocalTokenWindows } from '../../../src/domain/billing/local-token-windows.js';
import { DEFAULT_CAP_POLICY } from '../../../src/domain/billing/credit-fit.js';
import { heldByOtherCalls, type MeteredCall } from '../../../src/domain/billing/meter.js';
import { isAppError, type AppError } from '../../../src/domain/shared/errors.js';

/** 12:00:15 UTC: 45 seconds left in the minute. */
const T0 = Date.UTC(2026, 11, 7, 12, 0, 15);
const clock = { now: T0, nowMs: () => clock.now };
let windows: LocalTokenWindows;
const rates = () => {
  windows = new LocalTokenWindows(() => clock.now);
  return new KeyTokenRates(windows, clock, DEFAULT_CAP_POLICY);
};
afterEach(() => {
  windows?.close();
  clock.now = T0;
});

const capped = (inputTokens: number, maxOutputTokens: number): MeteredCall => ({
  model: 'm', route: '/v1/chat/completions', requestId: 'r', inputTokens, maxOutputTokens, outputCapExplicit: true,
});
const uncapped = (inputTokens: number, maxOutputTokens = 4096): MeteredCall => ({ ...capped(inputTokens, maxOutputTokens), outputCapExplicit: false });
const settled = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, status: 200 });

async function refusalOf(admitting: Promise<unknown>): Promise<AppError> {
  const err = await admitting.then(() => null, (e: unknown) => e);
  if (!isAppError(err)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

const headers = (left: number) => ({ 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': String(left) });

describe('a key’s tokens per minute', () => {
  it('admits while settled tokens plus the estimate fit, refuses past them until the minute ends', async () => {
    const tpm = rates();
    expect(await tpm.admit('k', 100, capped(20, 10), 'free')).toEqual({ headers: headers(100) });
    await tpm.counted('k', settled(40, 30));
    expect(await tpm.admit('k', 100, capped(20, 10), 'free')).toEqual({ headers: headers(30) });
    const refused = await refusalOf(tpm.admit('k', 100, capped(20, 11), 'free'));
    expect([refused.kind, refused.code, refused.retryAfterSeconds, refused.challenge?.headers]).toEqual(['rate_limit', 'rate_limit_exceeded', 45, headers(30)]);
    expect(refused.message).toBe("Rate limit exceeded: this API key's limit of 100 tokens per minute has 30 left this minute, and this request needs up to 31 tokens; retry in 45 s.");
    // Another key is counted on its own.
    expect(await tpm.admit('other', 100, capped(20, 11), 'free')).toEqual({ headers: headers(100) });
    clock.now = Date.UTC(2026, 11, 7, 12, 0, 59, 999);
    expect((await refusalOf(tpm.admit('k', 100, capped(20, 11), 'free'))).retryAfterSeconds).toBe(1);
    clock.now = Date.UTC(2026, 11, 7, 12, 1, 0);
    expect(await tpm.admit('k', 100, capped(20, 11), 'free')).toEqual({ headers: headers(100) });
  });

  it('counts each settlement in the minute it settles in', async () => {
    const tpm = rates();
    await tpm.counted('k', settled(50, 0));
    clock.now += 45_000;
    await tpm.counted('k', settled(10, 10));
    expect(await tpm.admit('k', 100, capped(1, 1), 'free')).toEqual({ headers: headers(80) });
  });

  it('lowers a call that set no cap: the allowance, else what the minute has left', async () => {
    const tpm = rates();
    const limit = 2000;
    expect(await tpm.admit('k', limit, uncapped(100), 'free')).toMatchObject({ outputCap: 1024 });
    await tpm.counted('k', settled(900, 0));
    expect(await tpm.admit('k', limit, uncapped(100), 'free')).toMatchObject({ outputCap: 1000 });
    // Beside tokens used, no less than the minimum cap (16): with 115 left, 100 input tokens leave 15.
    await tpm.counted('k', settled(985, 0));
    const refused = await refusalOf(tpm.admit('k', limit, uncapped(100), 'free'));
    expect(refused.message).toBe("Rate limit exceeded: this API key's limit of 2000 tokens per minute has 115 left this minute, and this request needs at least 116 tokens; retry in 45 s.");
  });

  it('in a fresh minute a single output token is enough', async () => {
    expect(await rates().admit('k', 100, uncapped(95), 'free')).toMatchObject({ outputCap: 5 });
  });

  it('refuses for good a call that does not fit in a whole minute', async () => {
    const tpm = rates();
    const explicit = await refusalOf(tpm.admit('k', 100, capped(60, 41), 'free'));
    expect(explicit.message).toBe("Request too large: this request needs up to 101 tokens, more than this API key's limit of 100 tokens per minute.");
    expect([explicit.retryAfterSeconds, explicit.challenge?.headers, heldByOtherCalls(explicit)]).toEqual([undefined, { ...headers(100), 'x-should-retry': 'false' }, null]);
    const lowerable = await refusalOf(tpm.admit('k', 100, uncapped(100), 'free'));
    expect(lowerable.message).toBe("Request too large: this request needs at least 101 tokens, more than this API key's limit of 100 tokens per minute.");
  });

  it('a call with a fixed cost estimate is checked on its tokens, its cap never lowered', async () => {
    const tpm = rates();
    const audio: MeteredCall = { ...uncapped(30, 200), estimateMicros: 5 };
    const refused = await refusalOf(tpm.admit('k', 100, audio, 'free'));
    expect(refused.message).toBe("Request too large: this request needs up to 230 tokens, more than this API key's limit of 100 tokens per minute.");
  });

  it('a batch line is lowered against the whole limit, and its refusal waits for the minute to end', async () => {
    const tpm = rates();
    await tpm.counted('k', settled(30, 0));
    // Lowered as if the minute were fresh (95 of 100), which the 70 left does not hold: the line waits.
    const refused = await refusalOf(tpm.admit('k', 100, uncapped(5), 'balance'));
    expect(refused.message).toBe("Rate limit exceeded: this API key's limit of 100 tokens per minute has 70 left this minute, and this request needs at least 100 tokens; retry in 45 s.");
    const held = heldByOtherCalls(refused);
    expect(held).not.toBeNull();
    // The wait ends with the minute: with the clock at its end, at once.
    clock.now = Date.UTC(2026, 11, 7, 12, 1, 0);
    await held!.released(60_000);
    expect(await tpm.admit('k', 100, uncapped(5), 'balance')).toEqual({ outputCap: 95, headers: headers(100) });
  });

  it('a wait for the minute ends when its signal aborts', async () => {
    const tpm = rates();
    await tpm.counted('k', settled(90, 0));
    const held = heldByOtherCalls(await refusalOf(tpm.admit('k', 100, capped(5, 10), 'balance')))!;
    const stop = new AbortController();
    const waiting = held.released(60_000, stop.signal);
    stop.abort(new Error('drained'));
    await expect(waiting).rejects.toThrow('drained');
  });
});

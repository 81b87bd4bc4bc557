import { afterEach, describe, expect, it } from 'vitest';
import { FixedWindowCounter } from '../../src/storage/rate-limit/fixed-window.js';

describe('FixedWindowCounter', () => {
  let now = 1_000_000;
  let counter: FixedWindowCounter | null = null;
  const make = (points: number, windowMs: number) => (counter = new FixedWindowCounter(points, windowMs, () => now));
  afterEach(async () => counter?.close());

  it('allows `points` requests per window, counting remaining down to 0, then refuses until the window ends', () => {
    const limiter = make(3, 60_000);
    expect([1, 2, 3].map(() => limiter.consume('k'))).toEqual([
      { allowed: true, remaining: 2, retryAfterSeconds: 60 },
      { allowed: true, remaining: 1, retryAfterSeconds: 60 },
      { allowed: true, remaining: 0, retryAfterSeconds: 60 },
    ]);
    now += 20_500;
    expect(limiter.consume('k')).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 40 });
    now += 39_499;
    expect(limiter.consume('k')).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    now += 1;
    expect(limiter.consume('k')).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 60 });
  });

  it('counts each key on its own, in a window that starts at its first request', () => {
    const limiter = make(1, 10_000);
    expect(limiter.consume('a').allowed).toBe(true);
    now += 6_000;
    expect(limiter.consume('a').allowed).toBe(false);
    expect(limiter.consume('b')).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 10 });
    now += 4_000;
    expect(limiter.consume('a').allowed).toBe(true);
    expect(limiter.consume('b')).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 6 });
  });

  it('rounds the wait up to whole seconds, never below 1', () => {
    const limiter = make(0, 1_500);
    expect(limiter.consume('k')).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 2 });
    now += 1_499;
    expect(limiter.consume('k').retryAfterSeconds).toBe(1);
  });
});

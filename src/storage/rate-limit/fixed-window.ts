/**
 * Per-key request counts in process memory, in fixed windows that start at a key's first
 * request: the embedded default's limiter (without Redis).
 *
 * Written here rather than taken from rate-limiter-flexible's RateLimiterMemory, which
 * counts the same way, because that one answers only through a promise. The check runs on
 * every request; its promise and the turns after it were a measurable share of the proxy
 * path's CPU at saturation (bench/RESULTS-archive.md). This answers synchronously.
 */
import type { RateDecision, RateLimiter } from '../../domain/identity/rate-limiter.port.js';

interface Window {
  count: number;
  resetAtMs: number;
}

export class FixedWindowCounter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    private readonly points: number,
    private readonly windowMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {
    // Windows of keys that stopped calling are dropped once they have ended.
    this.#sweeper = setInterval(() => this.#sweep(), windowMs);
    this.#sweeper.unref();
  }

  consume(key: string, limit = this.points): RateDecision {
    const now = this.nowMs();
    let window = this.#windows.get(key);
    if (window === undefined || window.resetAtMs <= now) {
      window = { count: 0, resetAtMs: now + this.windowMs };
      this.#windows.set(key, window);
    }
    window.count++;
    return {
      allowed: window.count <= limit,
      remaining: Math.max(0, limit - window.count),
      retryAfterSeconds: Math.max(1, Math.ceil((window.resetAtMs - now) / 1000)),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#windows.clear();
  }

  #sweep(): void {
    const now = this.nowMs();
    for (const [key, window] of this.#windows) if (window.resetAtMs <= now) this.#windows.delete(key);
  }
}

/** Per-key request limits, counted per caller (rateLimitKeyOf) by the scopes that limit them. */

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `key`, allowed while the window's count is within `limit` (a
   * key's own rate; default: the limiter's). In memory the answer is immediate, through
   * Redis it is a promise.
   */
  consume(key: string, limit?: number): RateDecision | Promise<RateDecision>;
  /** Readiness of a shared store (Redis): throws while it cannot be reached. */
  check?(): Promise<void>;
  close(): Promise<void>;
}

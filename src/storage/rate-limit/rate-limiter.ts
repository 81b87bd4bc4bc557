/**
 * Per-key request limits: in process memory in the embedded default (fixed-window.ts,
 * answering synchronously), or one shared counter in Redis on rate-limiter-flexible when
 * REDIS_URL is set, so that every replica enforces the same limit. If Redis becomes
 * unreachable, rate-limiter-flexible's in-memory limiter takes over (per replica) rather
 * than failing every request.
 */
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { FixedWindowCounter } from './fixed-window.js';
import type { RateDecision, RateLimiter } from '../../domain/identity/rate-limiter.port.js';

const WINDOW_SECONDS = 60;

/** The decision for a count of `res.consumedPoints` against `limit` (a key's own rate may be above or below the limiter's points). */
function decisionFrom(res: RateLimiterRes, limit: number): RateDecision {
  return {
    allowed: res.consumedPoints <= limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

/** How long the first requests wait for the initial Redis connection before using the per-replica fallback. */
const FIRST_CONNECT_WAIT_MS = 2_000;

/**
 * Resolves once the client is first ready, or fails to connect, or after `timeoutMs`:
 * a replica that has just started must not count its first requests only locally
 * while the connection is still being set up.
 */
export function firstConnection(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const event of ['ready', 'error', 'end'] as const) redis.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    timer.unref();
    for (const event of ['ready', 'error', 'end'] as const) redis.once(event, done);
  });
}

/** The shared limit: rate-limiter-flexible on Redis, with its in-memory insurance limiter. */
class RedisRateLimiter implements RateLimiter {
  /** Set once `connected` has settled: from then on consume() does not wait a turn for it. */
  #ready = false;
  #closed = false;

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly onClose: () => Promise<void>,
    private readonly connected: Promise<void>,
    private readonly ping: () => Promise<unknown>,
  ) {
    void connected.then(() => (this.#ready = true));
  }

  async consume(key: string, limit = this.limiter.points): Promise<RateDecision> {
    if (!this.#ready) await this.connected;
    try {
      return decisionFrom(await this.limiter.consume(key, 1), limit);
    } catch (rejection) {
      // Past the limiter's points the library refuses, yet it counted: a key whose own rate is higher reads the count.
      if (rejection instanceof RateLimiterRes) return decisionFrom(rejection, limit);
      throw rejection;
    }
  }

  /**
   * Waits for the first connection attempt to settle; without the offline queue, a ping fails
   * at once while disconnected. After close() there is nothing to check (a short-lived CLI
   * command must not report Redis unreachable because it closed the connection itself).
   */
  async check(): Promise<void> {
    await this.connected;
    if (this.#closed) return;
    await this.ping();
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.onClose();
  }
}

export function createRateLimiter(options: { requestsPerMinute: number; redisUrl: string | null; keyPrefix?: string }): RateLimiter {
  if (!options.redisUrl) return new FixedWindowCounter(options.requestsPerMinute, WINDOW_SECONDS * 1000);
  const common = { points: options.requestsPerMinute, duration: WINDOW_SECONDS, keyPrefix: options.keyPrefix ?? 'sluice:rl' };
  const memory = new RateLimiterMemory(common);
  const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  // Connection errors are handled by the insurance limiter; without a listener ioredis would log each retry.
  redis.on('error', () => {});
  const limiter = new RateLimiterRedis({ ...common, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
  return new RedisRateLimiter(
    limiter,
    async () => {
      redis.disconnect();
    },
    firstConnection(redis, FIRST_CONNECT_WAIT_MS),
    () => redis.ping(),
  );
}

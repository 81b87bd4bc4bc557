/** The replay store shared by replicas: one `SET key 1 NX EX ttl` per admitted request. */
import { Redis } from 'ioredis';
import type { ReplayGuard } from '../../domain/gateway/replay-guard.port.js';

export class RedisReplayGuard implements ReplayGuard {
  readonly #redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // Fail fast: a request waits on this answer, and no answer means refusal, not a queue.
    this.#redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2_000 });
    this.#redis.on('error', () => {});
  }

  async remember(key: string, ttlSeconds: number): Promise<boolean> {
    const answer = await this.#redis.set(`${this.prefix}:${key}`, '1', 'EX', ttlSeconds, 'NX');
    return answer === 'OK';
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

/**
 * Keys' tokens per minute shared by replicas through Redis (REDIS_URL): per key and UTC
 * minute, `<prefix>:tpm:<key>:<minute start ms>` counts the tokens of the calls the key
 * settled in that minute. A settlement adds its tokens and sets the counter's expiry in
 * one Lua script, so every replica's settlements are counted once and a counter never
 * outlives its minute by more than a minute, whatever the replicas do meanwhile.
 *
 * While Redis is unreachable, a replica counts in its own memory (the fallback), as the
 * rate limiter does.
 */
import { Redis } from 'ioredis';
import { firstConnection } from './rate-limiter.js';
import type { TokenWindows } from '../../domain/billing/token-windows.port.js';

/** KEYS: the minute's counter. ARGV: tokens, TTL ms. → the minute's tokens. */
const ADD = `
local tokens = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return tokens`;

/** A counter lives two minutes: its own, and one more for a clock a little behind. */
const COUNTER_TTL_MS = 120_000;
const FIRST_CONNECT_WAIT_MS = 2_000;

export class RedisTokenWindows implements TokenWindows {
  readonly #redis: Redis;
  /** Settles once the first connection attempt did: a replica just started does not count alone meanwhile. */
  readonly #connected: Promise<void>;
  #connecting = true;

  constructor(
    url: string,
    private readonly options: { prefix: string; fallback: TokenWindows },
  ) {
    this.#redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    // Unreachable Redis: tokens are counted per replica meanwhile; ioredis would log every retry otherwise.
    this.#redis.on('error', () => {});
    this.#connected = firstConnection(this.#redis, FIRST_CONNECT_WAIT_MS).then(() => {
      this.#connecting = false;
    });
  }

  async used(keyId: string, startMs: number): Promise<number> {
    if (this.#connecting) await this.#connected;
    if (this.#redis.status !== 'ready') return this.options.fallback.used(keyId, startMs);
    try {
      return Number((await this.#redis.get(this.#counter(keyId, startMs))) ?? 0);
    } catch {
      return this.options.fallback.used(keyId, startMs);
    }
  }

  async add(keyId: string, startMs: number, tokens: number): Promise<void> {
    if (this.#connecting) await this.#connected;
    if (this.#redis.status !== 'ready') return this.options.fallback.add(keyId, startMs, tokens);
    try {
      await this.#redis.eval(ADD, 1, this.#counter(keyId, startMs), tokens, COUNTER_TTL_MS);
    } catch {
      await this.options.fallback.add(keyId, startMs, tokens);
    }
  }

  #counter(keyId: string, startMs: number): string {
    return `${this.options.prefix}:tpm:${keyId}:${startMs}`;
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

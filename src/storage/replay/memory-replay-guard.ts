/**
 * The replay store of one process: keys with their expiry in a Map, swept as they are
 * added so it never holds more than the admitted requests of the last window.
 */
import type { Clock } from '../../domain/shared/clock.js';
import type { ReplayGuard } from '../../domain/gateway/replay-guard.port.js';

export class MemoryReplayGuard implements ReplayGuard {
  readonly #expiries = new Map<string, number>();
  #nextSweepMs = 0;

  constructor(private readonly clock: Clock) {}

  remember(key: string, ttlSeconds: number): boolean {
    const now = this.clock.nowMs();
    if (now >= this.#nextSweepMs) this.#sweep(now, ttlSeconds);
    const expires = this.#expiries.get(key);
    if (expires !== undefined && expires > now) return false;
    this.#expiries.set(key, now + ttlSeconds * 1000);
    return true;
  }

  /** Insertion order is expiry order (one TTL for all), so the sweep stops at the first live key. */
  #sweep(now: number, ttlSeconds: number): void {
    for (const [key, expires] of this.#expiries) {
      if (expires > now) break;
      this.#expiries.delete(key);
    }
    this.#nextSweepMs = now + Math.min(60_000, ttlSeconds * 100);
  }
}

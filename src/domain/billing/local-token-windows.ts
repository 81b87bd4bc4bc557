/**
 * Keys' tokens per minute in this process's memory: the default without Redis, and what
 * a replica falls back to while Redis is unreachable. One counter per key, for its
 * latest minute: a count for a later minute replaces it, and counters whose minute has
 * ended are dropped once a minute.
 */
import type { TokenWindows } from './token-windows.port.js';

interface Minute {
  startMs: number;
  tokens: number;
}

const MINUTE_MS = 60_000;

export class LocalTokenWindows implements TokenWindows {
  readonly #minutes = new Map<string, Minute>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(private readonly nowMs: () => number) {
    this.#sweeper = setInterval(() => this.#sweep(), MINUTE_MS);
    this.#sweeper.unref();
  }

  used(keyId: string, startMs: number): Promise<number> {
    return Promise.resolve(this.usedNow(keyId, startMs));
  }

  /** The same without a promise. */
  usedNow(keyId: string, startMs: number): number {
    const minute = this.#minutes.get(keyId);
    return minute?.startMs === startMs ? minute.tokens : 0;
  }

  add(keyId: string, startMs: number, tokens: number): Promise<void> {
    const minute = this.#minutes.get(keyId);
    if (minute?.startMs === startMs) minute.tokens += tokens;
    else if (minute === undefined || minute.startMs < startMs) this.#minutes.set(keyId, { startMs, tokens });
    return Promise.resolve();
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#minutes.clear();
  }

  #sweep(): void {
    const ended = this.nowMs() - MINUTE_MS;
    for (const [keyId, minute] of this.#minutes) if (minute.startMs <= ended) this.#minutes.delete(keyId);
  }
}

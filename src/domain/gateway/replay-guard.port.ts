/**
 * The replay port: remembers the requests the gateway admitted for twice the timestamp
 * tolerance (a signature can be fresh on either side of now), so the same signed request
 * is served once. In memory for one process (src/storage/replay/memory-replay-guard.ts),
 * or in Redis so replicas share it (redis-replay-guard.ts).
 */
export interface ReplayGuard {
  /** Records `key` for `ttlSeconds`; true when it was new, false when it was already there. */
  remember(key: string, ttlSeconds: number): Promise<boolean> | boolean;
  close?(): Promise<void>;
}

/** `req:<gw-request-id>` when the intermediary sent one, else `sig:<kid>:<t>:<matched v1>`. */
export function replayKeyOf(requestId: string | undefined, kid: string, t: string, matched: string): string {
  return requestId !== undefined ? `req:${requestId}` : `sig:${kid}:${t}:${matched}`;
}

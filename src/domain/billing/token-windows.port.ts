/**
 * Where an API key's tokens per minute are counted: per key and UTC minute, the tokens
 * (input and output) of the calls it settled in that minute. In this process's memory
 * (local-token-windows.ts) or shared by replicas through Redis
 * (storage/rate-limit/redis-token-windows.ts); key-token-rates.ts checks calls against it.
 */
export interface TokenWindows {
  /** The tokens counted for `keyId` in the minute that starts at `startMs`. */
  used(keyId: string, startMs: number): Promise<number>;
  /** Counts `tokens` for `keyId` in the minute that starts at `startMs`. */
  add(keyId: string, startMs: number, tokens: number): Promise<void>;
}

/** Time source, injected so that tests of expiry and leases can move time. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000);

/** Time source, injected so that tests of expiry and leases can move time. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000);

let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()` (`2026-11-26T01:22:44.123Z`), formatted from a prefix kept
 * per second: settlements stamp every call, and Date's own formatting was most of what
 * stamping cost.
 */
export function isoTimestampOf(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const millis = whole - second * 1000;
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/** Money is integer micro-dollars everywhere inside Sluice; floats exist only at the wire. */
export const MICROS_PER_USD = 1_000_000;

export const usdToMicros = (usd: number): number => Math.round(usd * MICROS_PER_USD);

export const microsToUsd = (micros: number): number => micros / MICROS_PER_USD;

export interface TokenPrice {
  /** USD per million input tokens. */
  inputPerMillionUsd: number;
  /** USD per million output tokens. */
  outputPerMillionUsd: number;
}

/**
 * Cost of a call in micro-dollars. USD per million tokens is exactly micro-dollars per
 * token; the sum is rounded up so that no billable call is free.
 */
export function costMicros(price: TokenPrice, inputTokens: number, outputTokens: number): number {
  const exact = inputTokens * price.inputPerMillionUsd + outputTokens * price.outputPerMillionUsd;
  // `+ 0` turns the -0 of a free call (ceil of a tiny negative) into 0.
  return Math.ceil(exact - 1e-9) + 0;
}

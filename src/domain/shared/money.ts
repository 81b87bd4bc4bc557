/** Money is integer micro-dollars everywhere inside Sluice; floats exist only at the wire. */
export const MICROS_PER_USD = 1_000_000;

export const usdToMicros = (usd: number): number => Math.round(usd * MICROS_PER_USD);

export const microsToUsd = (micros: number): number => micros / MICROS_PER_USD;

export interface TokenPrice {
  /** USD per million input tokens. */
  inputPerMillionUsd: number;
  /** USD per million output tokens. */
  outputPerMillionUsd: number;
  /** USD per million input tokens read from the engine's prompt cache; absent: the input price (never free by default). */
  cachedInputPerMillionUsd?: number;
  /** USD per million input tokens written to the engine's prompt cache; absent: the input price. */
  cacheWritePerMillionUsd?: number;
}

/** Of a call's input tokens, those read from and written to the engine's prompt cache. */
export interface CachedInput {
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * Cost of a call in micro-dollars. USD per million tokens is exactly micro-dollars per
 * token; the sum is rounded up so that no billable call is free. `cached`: of the input
 * tokens, those read from (or written to) the prompt cache, each priced at its own price
 * (the input price when the model sets none); an engine's cached count beyond its input
 * count is capped at it.
 */
export function costMicros(price: TokenPrice, inputTokens: number, outputTokens: number, cached?: CachedInput): number {
  let exact = inputTokens * price.inputPerMillionUsd + outputTokens * price.outputPerMillionUsd;
  if (cached !== undefined) {
    const read = Math.min(cached.cachedInputTokens ?? 0, inputTokens);
    const written = Math.min(cached.cacheWriteTokens ?? 0, inputTokens - read);
    exact +=
      read * ((price.cachedInputPerMillionUsd ?? price.inputPerMillionUsd) - price.inputPerMillionUsd) +
      written * ((price.cacheWritePerMillionUsd ?? price.inputPerMillionUsd) - price.inputPerMillionUsd);
  }
  // `+ 0` turns the -0 of a free call (ceil of a tiny negative) into 0.
  return Math.ceil(exact - 1e-9) + 0;
}

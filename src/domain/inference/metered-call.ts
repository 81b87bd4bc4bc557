/** The MeteredCall of an inference request: what its credit reservation is priced on. */
import type { ModelConfig } from '../../config/schema.js';
import type { MeteredCall } from '../billing/meter.js';

/**
 * A hard upper bound on the tokens of `text` under any byte-level or byte-fallback
 * tokenizer (no token covers less than one byte), used to skip tokenization when an
 * input cannot possibly exceed a limit.
 */
export const maxPossibleTokens = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Special tokens a runtime may add around each text (chat-template role markers, [CLS]/[SEP]). */
const FRAMING_TOKENS_PER_TEXT = 8;

/**
 * Input tokens are bounded by the texts' UTF-8 bytes (no tokenizer makes more tokens
 * than bytes) plus each text's framing: an upper estimate that costs no tokenization
 * on the request path.
 */
export function meteredCallOf(
  model: ModelConfig,
  route: string,
  requestId: string,
  texts: readonly string[],
  maxOutputTokens: number,
): MeteredCall {
  let inputTokens = 0;
  for (const text of texts) inputTokens += maxPossibleTokens(text) + FRAMING_TOKENS_PER_TEXT;
  return { model: model.id, route, requestId, inputTokens, maxOutputTokens };
}

/** The request's own output cap, else the model's default. */
export function outputCapOf(model: ModelConfig, sampling: Readonly<Record<string, unknown>>): number {
  const cap = sampling.max_completion_tokens ?? sampling.max_tokens;
  return typeof cap === 'number' ? cap : model.maxOutputTokens;
}

/** The MeteredCall of an inference request: what its credit reservation is priced on. */
import type { ModelSpec } from '../models/model-spec.types.js';
import type { Caller } from '../identity/caller.js';
import { admitCall, type Admission, type MeteredCall } from '../billing/meter.js';
import { isAppError } from '../shared/errors.js';
import type { ModelResolver } from '../models/model-resolver.port.js';

/**
 * A hard upper bound on the tokens of `text` under any byte-level or byte-fallback
 * tokenizer (no token covers less than one byte), used to skip tokenization when an
 * input cannot possibly exceed a limit.
 */
export const maxPossibleTokens = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Special tokens a runtime may add around each text (chat-template role markers, [CLS]/[SEP]). */
const FRAMING_TOKENS_PER_TEXT = 8;

/**
 * Special tokens a chat template adds once per conversation (a begin-of-sequence token,
 * the header that primes the assistant's reply), beyond each message's own framing.
 * Without them the estimate of a conversation of short messages falls below what the
 * upstream reports, and a burst that is admitted before any of its calls settles is
 * admitted for more than the balance pays for.
 */
export const CONVERSATION_FRAMING_TOKENS = 8;

/** A call's output cap, and whether the request set it (only a cap it did not set may be lowered). */
export interface OutputCap {
  maxOutputTokens: number;
  outputCapExplicit: boolean;
}

/**
 * Input tokens are bounded by the texts' UTF-8 bytes (no tokenizer makes more tokens
 * than bytes) plus each text's framing: an upper estimate that costs no tokenization
 * on the request path.
 */
export function meteredCallOf(
  model: ModelSpec,
  route: string,
  requestId: string,
  texts: readonly string[],
  /** A number is a fixed cap (0 for calls that produce no tokens). */
  cap: OutputCap | number,
  /** Tokens added once for the whole input (CONVERSATION_FRAMING_TOKENS for a chat model's conversation). */
  framingTokens = 0,
): MeteredCall {
  let inputTokens = framingTokens;
  for (const text of texts) inputTokens += maxPossibleTokens(text) + FRAMING_TOKENS_PER_TEXT;
  const { maxOutputTokens, outputCapExplicit } = typeof cap === 'number' ? { maxOutputTokens: cap, outputCapExplicit: true } : cap;
  return { model: model.id, route, requestId, inputTokens, maxOutputTokens, outputCapExplicit };
}

/** The request's own output cap (`max_completion_tokens`, `max_tokens`), else the model's default. */
export function outputCapOf(model: ModelSpec, sampling: Readonly<Record<string, unknown>>): OutputCap {
  const cap = sampling.max_completion_tokens ?? sampling.max_tokens;
  return typeof cap === 'number'
    ? { maxOutputTokens: cap, outputCapExplicit: true }
    : { maxOutputTokens: model.maxOutputTokens, outputCapExplicit: false };
}

/**
 * Admits a call that has no output to lower (embeddings, moderations) on its byte bound;
 * when the credit does not cover that bound, counts the texts with the model's tokenizer
 * and, where every count is exact, admits on the counted tokens (plus the same framing)
 * instead: the byte bound can exceed the tokens a few times over, and must not refuse an
 * input the credit pays for. The count costs only calls the bound would have refused.
 */
export async function admitOnCountedInput(
  caller: Caller,
  registry: ModelResolver,
  model: ModelSpec,
  call: MeteredCall,
  texts: readonly string[],
): Promise<Admission> {
  try {
    return await admitCall(caller, call);
  } catch (err) {
    if (!isAppError(err) || err.kind !== 'insufficient_quota') throw err;
    let inputTokens = 0;
    for (const text of texts) {
      const counted = await registry.countTokens(model, text);
      if (!counted.exact) throw err;
      inputTokens += counted.tokens + FRAMING_TOKENS_PER_TEXT;
    }
    if (inputTokens >= call.inputTokens) throw err;
    return admitCall(caller, { ...call, inputTokens });
  }
}

/** The MeteredCall of an inference request: what its credit reservation is priced on. */
import type { ModelSpec } from '../models/model-spec.types.js';
import type { Caller } from '../identity/caller.js';
import { admitCall, type Admission, type MeteredCall } from '../billing/meter.js';
import { isAppError } from '../shared/errors.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { CallContext, ChatMessage } from '../models/inference-backend.port.js';

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
  /**
   * Tokens added once for the whole input: CONVERSATION_FRAMING_TOKENS for a chat
   * model's conversation, IMAGE_PART_TOKENS for each image part.
   */
  fixedTokens = 0,
): MeteredCall {
  let inputTokens = fixedTokens;
  for (const text of texts) inputTokens += maxPossibleTokens(text) + FRAMING_TOKENS_PER_TEXT;
  const { maxOutputTokens, outputCapExplicit } = typeof cap === 'number' ? { maxOutputTokens: cap, outputCapExplicit: true } : cap;
  return { model: model.id, route, requestId, inputTokens, maxOutputTokens, outputCapExplicit };
}

/** How many choices the request asks for (`n`, carried to the engine): each may run to the output cap. */
export const choicesOf = (sampling: Readonly<Record<string, unknown>>): number =>
  typeof sampling.n === 'number' && sampling.n > 1 ? sampling.n : 1;

/** The request's own output cap (`max_completion_tokens`, `max_tokens`), else the model's default; times `n`. */
export function outputCapOf(model: ModelSpec, sampling: Readonly<Record<string, unknown>>): OutputCap {
  const cap = sampling.max_completion_tokens ?? sampling.max_tokens;
  const choices = choicesOf(sampling);
  return typeof cap === 'number'
    ? { maxOutputTokens: cap * choices, outputCapExplicit: true }
    : { maxOutputTokens: model.maxOutputTokens * choices, outputCapExplicit: false };
}

/**
 * An image part's input tokens until the engine's usage arrives: a fixed estimate (its
 * URL says nothing of its size), above what a high-detail image costs on OpenAI's models.
 */
export const IMAGE_PART_TOKENS = 1_500;

/** Request fields the engine reads as input: their JSON counts toward the input estimate. */
const INPUT_FIELDS = ['tools', 'tool_choice', 'response_format', 'prediction'] as const;

/**
 * What a chat call's input estimate is priced on: each message's text, its tool calls
 * and its other parts as JSON (images as IMAGE_PART_TOKENS each), and the tools, schemas
 * and predictions the engine reads.
 */
export function chatInputOf(messages: readonly ChatMessage[], sampling: Readonly<Record<string, unknown>>): { texts: string[]; images: number } {
  const texts: string[] = [];
  let images = 0;
  for (const m of messages) {
    texts.push(m.content);
    if (m.tool_calls) texts.push(JSON.stringify(m.tool_calls));
    if (!Array.isArray(m.wireContent)) continue;
    for (const part of m.wireContent as Array<{ type?: unknown }>) {
      if (part.type === 'image_url') images += 1;
      else if (part.type !== 'text' && part.type !== 'input_text' && part.type !== 'output_text') texts.push(JSON.stringify(part));
    }
  }
  for (const field of INPUT_FIELDS) if (sampling[field] !== undefined) texts.push(JSON.stringify(sampling[field]));
  return { texts, images };
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

/** The metered call, naming the name the model was asked for by (an alias, or the id in another case): a key's model list must allow both. */
export function askedBy(metered: MeteredCall, name: string): MeteredCall {
  return name === metered.model ? metered : { ...metered, askedAs: name };
}

/** The metered call, naming the agent session, tags and end user the context carries (its usage record names them). */
export function labelled(metered: MeteredCall, context: Pick<CallContext, 'sessionId' | 'tags' | 'endUser'>): MeteredCall {
  const { sessionId, tags, endUser } = context;
  if (sessionId === undefined && tags === undefined && endUser === undefined) return metered;
  const call = { ...metered };
  if (sessionId !== undefined) call.sessionId = sessionId;
  if (tags !== undefined) call.tags = tags;
  if (endUser !== undefined) call.endUser = endUser;
  return call;
}

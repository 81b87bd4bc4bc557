/**
 * Decoding one 30-second window inside the ONNX worker (openai/whisper decoding.py):
 * the whole loop runs next to the decoder session, so a step costs one graph run and a
 * pass over one row of logits, not two thread hops and a copy of the logits. The key/value
 * cache never leaves the worker: each step's `present.*` tensors are fed back as the
 * next step's `past_key_values.*`. The cross-attention keys/values are computed from the
 * encoder output once, by the first step (use_cache_branch false); later steps feed those
 * back (use_cache_branch true) and ignore the placeholders the merged graph answers for
 * them, as transformers.js does with the Optimum exports.
 *
 * Rules: suppressed control tokens, timestamps in pairs and never going back, the first
 * token a timestamp no later than max_initial_timestamp, timestamps forced when their
 * total probability beats any single text token. Greedy at temperature 0, sampled above.
 *
 * Everything here runs in the worker (see WorkerProcedure): the functions below may call
 * one another, but nothing outside this file, and only type imports.
 */
import type { WorkerContext } from '../../../runtime/ort-runtime.js';
import type { WhisperTokens } from './tokens.js';

export type WhisperRuleTokens = Pick<WhisperTokens, 'eot' | 'timestampBegin' | 'suppress' | 'beginSuppress' | 'maxInitialTimestampIndex'>;

export interface WindowArgs {
  /** Session key of the decoder. */
  decoder: string;
  /** State holding the encoder output, retained under `encoderOut`. */
  state: string;
  encoderOut: string;
  /** decoder_model_merged (cache) or decoder_model (whole sequence every step). */
  merged: boolean;
  pastNames: readonly string[];
  heads: number;
  headDim: number;
  /** Optional previous-text prompt + the start-of-transcript sequence. */
  prefix: readonly number[];
  /** Where <|startoftranscript|> sits in `prefix` (its logits give the no-speech probability). */
  sotIndex: number;
  noSpeech: number;
  rules: WhisperRuleTokens;
  temperature: number;
  /** Most tokens to sample in this window. */
  maxTokens: number;
}

export interface WindowResult {
  /** Sampled tokens, end-of-text excluded. */
  tokens: number[];
  /** Log-probabilities of the sampled tokens, end-of-text included. */
  sumLogprob: number;
  noSpeechProb: number;
  /** Decoder runs made. */
  steps: number;
}

export function maskRange(logits: Float32Array, from: number, to: number): void {
  logits.fill(-Infinity, Math.max(0, from), Math.min(logits.length, to));
}

/** Applies the suppression and timestamp rules in place, given the tokens sampled so far. */
export function applyWhisperRules(logits: Float32Array, sampled: readonly number[], t: WhisperRuleTokens): void {
  for (const id of t.suppress) logits[id] = -Infinity;
  const tb = t.timestampBegin;
  if (sampled.length === 0) {
    for (const id of t.beginSuppress) logits[id] = -Infinity;
    maskRange(logits, 0, tb);
    maskRange(logits, tb + t.maxInitialTimestampIndex + 1, logits.length);
    return;
  }
  const lastWasTimestamp = sampled[sampled.length - 1]! >= tb;
  const penultimateWasTimestamp = sampled.length < 2 || sampled[sampled.length - 2]! >= tb;
  if (lastWasTimestamp) {
    if (penultimateWasTimestamp) maskRange(logits, tb, logits.length);
    else maskRange(logits, 0, t.eot);
  }
  let last = -1;
  for (let i = sampled.length - 1; i >= 0; i--) {
    if (sampled[i]! >= tb) {
      last = sampled[i]!;
      break;
    }
  }
  if (last >= 0) {
    // Never go back in time; a segment that just opened may close at the same instant only as a pair.
    maskRange(logits, tb, lastWasTimestamp && !penultimateWasTimestamp ? last : last + 1);
  }
  // Compared in logits: the softmax normaliser is common to both sides.
  let maxText = -Infinity;
  for (let i = 0; i < tb; i++) if (logits[i]! > maxText) maxText = logits[i]!;
  let tsMax = -Infinity;
  for (let i = tb; i < logits.length; i++) if (logits[i]! > tsMax) tsMax = logits[i]!;
  if (tsMax === -Infinity) return;
  let tsSum = 0;
  for (let i = tb; i < logits.length; i++) tsSum += Math.exp(logits[i]! - tsMax);
  if (tsMax + Math.log(tsSum) > maxText) maskRange(logits, 0, tb);
}

/**
 * The next token and its log-probability: argmax at temperature 0, else a draw from
 * softmax(logits / temperature). One pass for the maximum, one for the normaliser; terms
 * more than 40 below the maximum (each under 5e-18 of it) are left out of the sum, which
 * spares most of the exponentials once the rules have masked a range.
 */
export function pickToken(logits: Float32Array, temperature: number, random: () => number): { id: number; logprob: number } {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  const max = logits[best]!;
  const floor = max - 40;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const l = logits[i]!;
    if (l > floor) sum += Math.exp(l - max);
  }
  const logNorm = max + Math.log(sum);
  let id = best;
  if (temperature > 0) {
    let tempSum = 0;
    for (let i = 0; i < logits.length; i++) {
      const l = logits[i]!;
      if (l !== -Infinity) tempSum += Math.exp((l - max) / temperature);
    }
    let r = random() * tempSum;
    for (let i = 0; i < logits.length; i++) {
      const l = logits[i]!;
      if (l === -Infinity) continue;
      r -= Math.exp((l - max) / temperature);
      if (r <= 0) {
        id = i;
        break;
      }
    }
  }
  return { id, logprob: logits[id]! - logNorm };
}

/** The worker procedure: decodes one window after `prefix`; the cache starts empty. */
export async function whisperDecodeWindow(ctx: WorkerContext, a: WindowArgs) {
  const session = ctx.session(a.decoder);
  const encoderOut = ctx.state(a.state).get(a.encoderOut);
  if (!encoderOut) throw new Error('the encoder output is missing');
  const Tensor = ctx.ort.Tensor;
  const ids = (values: readonly number[]) => new Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), [1, values.length]);
  const empty = new Tensor('float32', new Float32Array(0), [1, a.heads, 0, a.headDim]);
  const past: Record<string, unknown> = {};
  const history: number[] = [];
  let steps = 0;

  /** Runs the decoder on `tokens` (after the cached ones); returns logits [1, rows, vocab]. */
  const step = async (tokens: readonly number[]) => {
    const first = steps === 0;
    const feeds: Record<string, unknown> = { input_ids: ids(a.merged ? tokens : [...history, ...tokens]), encoder_hidden_states: encoderOut };
    if (a.merged) {
      for (const name of a.pastNames) feeds[name] = first ? empty : past[name];
      feeds.use_cache_branch = new Tensor('bool', new Uint8Array([first ? 0 : 1]), [1]);
    }
    const out = await session.run(feeds);
    steps++;
    if (a.merged) {
      for (const name of a.pastNames) {
        // The cross-attention cache is the first step's; later steps answer placeholders for it.
        if (!first && name.includes('.encoder.')) continue;
        past[name] = out[name.replace('past_key_values', 'present')];
      }
    }
    history.push(...tokens);
    return out.logits;
  };

  const first = await step(a.prefix);
  const vocab = first.dims[2] as number;
  const rows = first.dims[1] as number;
  const firstData = first.data as Float32Array;
  // Rows of the prefix: the last `prefix.length` rows of the output.
  const rowOf = (i: number) => firstData.subarray((rows - a.prefix.length + i) * vocab, (rows - a.prefix.length + i + 1) * vocab);
  const atSot = rowOf(a.sotIndex);
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (atSot[i]! > max) max = atSot[i]!;
  let sum = 0;
  for (let i = 0; i < vocab; i++) sum += Math.exp(atSot[i]! - max);
  const noSpeechProb = a.noSpeech < vocab ? Math.exp(atSot[a.noSpeech]! - max) / sum : 0;

  const logits = new Float32Array(vocab);
  logits.set(rowOf(a.prefix.length - 1));
  const tokens: number[] = [];
  let sumLogprob = 0;
  for (let i = 0; i < a.maxTokens; i++) {
    if (ctx.cancelled()) throw Object.assign(new Error('decoding was cancelled'), { code: 'cancelled' });
    applyWhisperRules(logits, tokens, a.rules);
    const next = pickToken(logits, a.temperature, Math.random);
    // The end-of-text logprob counts too; the average divides by tokens + 1 for it.
    sumLogprob += next.logprob;
    if (next.id === a.rules.eot) break;
    tokens.push(next.id);
    if (i === a.maxTokens - 1) break;
    const out = await step([next.id]);
    const r = out.dims[1] as number;
    logits.set((out.data as Float32Array).subarray((r - 1) * vocab, r * vocab));
  }
  return { result: { tokens, sumLogprob, noSpeechProb, steps } };
}

/** Registers the procedure with a runtime under this name. */
export const WHISPER_WINDOW_PROCEDURE = 'whisper.decode-window';
export const WHISPER_WINDOW_HELPERS = [maskRange, applyWhisperRules, pickToken] as const;

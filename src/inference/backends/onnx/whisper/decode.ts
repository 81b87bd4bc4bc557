/**
 * Decoding one 30-second window with Whisper's rules (openai/whisper decoding.py):
 * suppressed control tokens, timestamps in pairs and never going back, the first token
 * a timestamp no later than max_initial_timestamp, timestamps forced when their total
 * probability beats any single text token. Greedy at temperature 0, sampled above.
 */
import type { DecoderRun } from '../seq2seq.js';
import { argmax, logSoftmaxAt, softmax } from '../math.js';
import type { WhisperTokens } from './tokens.js';

export interface DecodeOptions {
  temperature: number;
  /** Most tokens to sample in this window. */
  maxTokens: number;
  random?: () => number;
}

export interface DecodedWindow {
  /** Sampled tokens, end-of-text excluded. */
  tokens: number[];
  sumLogprob: number;
  avgLogprob: number;
  noSpeechProb: number;
}

function mask(logits: Float32Array, from: number, to: number): void {
  logits.fill(-Infinity, Math.max(0, from), Math.min(logits.length, to));
}

/** Applies the suppression and timestamp rules in place, given the tokens sampled so far. */
export function applyWhisperRules(logits: Float32Array, sampled: readonly number[], t: WhisperTokens): void {
  for (const id of t.suppress) logits[id] = -Infinity;
  const tb = t.timestampBegin;
  if (sampled.length === 0) {
    for (const id of t.beginSuppress) logits[id] = -Infinity;
    mask(logits, 0, tb);
    mask(logits, tb + t.maxInitialTimestampIndex + 1, logits.length);
    return;
  }
  const lastWasTimestamp = sampled[sampled.length - 1]! >= tb;
  const penultimateWasTimestamp = sampled.length < 2 || sampled[sampled.length - 2]! >= tb;
  if (lastWasTimestamp) {
    if (penultimateWasTimestamp) mask(logits, tb, logits.length);
    else mask(logits, 0, t.eot);
  }
  const timestamps = sampled.filter((id) => id >= tb);
  if (timestamps.length > 0) {
    // Never go back in time; a segment that just opened may close at the same instant only as a pair.
    const last = timestamps[timestamps.length - 1]!;
    mask(logits, tb, lastWasTimestamp && !penultimateWasTimestamp ? last : last + 1);
  }
  // Compared in logits: the softmax normaliser is common to both sides.
  let maxText = -Infinity;
  for (let i = 0; i < tb; i++) if (logits[i]! > maxText) maxText = logits[i]!;
  let tsMax = -Infinity;
  for (let i = tb; i < logits.length; i++) if (logits[i]! > tsMax) tsMax = logits[i]!;
  if (tsMax === -Infinity) return;
  let tsSum = 0;
  for (let i = tb; i < logits.length; i++) tsSum += Math.exp(logits[i]! - tsMax);
  if (tsMax + Math.log(tsSum) > maxText) mask(logits, 0, tb);
}

function choose(logits: Float32Array, temperature: number, random: () => number): number {
  if (temperature <= 0) return argmax(logits);
  const probs = softmax(Array.from(logits, (l) => l / temperature));
  let r = random();
  for (let i = 0; i < probs.length; i++) {
    r -= probs[i]!;
    if (r <= 0) return i;
  }
  return argmax(logits);
}

/**
 * Decodes after `prefix` (optional previous-text prompt + the start-of-transcript
 * sequence, whose first token sits at `sotIndex`). The cache is reset first.
 */
export async function decodeWindow(
  run: DecoderRun,
  prefix: readonly number[],
  sotIndex: number,
  t: WhisperTokens,
  o: DecodeOptions,
): Promise<DecodedWindow> {
  run.resetCache();
  const first = await run.step(prefix);
  const atSot = first.logits.subarray(sotIndex * first.vocab, (sotIndex + 1) * first.vocab);
  const noSpeechProb = softmax(atSot)[t.noSpeech] ?? 0;
  let logits = first.logits.slice((prefix.length - 1) * first.vocab, prefix.length * first.vocab);
  const tokens: number[] = [];
  let sumLogprob = 0;
  for (let i = 0; i < o.maxTokens; i++) {
    applyWhisperRules(logits, tokens, t);
    const next = choose(logits, o.temperature, o.random ?? Math.random);
    // The end-of-text logprob counts too; the average divides by tokens + 1 for it.
    sumLogprob += logSoftmaxAt(logits, next);
    if (next === t.eot) break;
    tokens.push(next);
    if (i === o.maxTokens - 1) break;
    logits = (await run.step([next])).logits.slice();
  }
  return { tokens, sumLogprob, avgLogprob: sumLogprob / (tokens.length + 1), noSpeechProb };
}

/** The most likely language after <|startoftranscript|>, among the model's language tokens. */
export async function detectLanguage(run: DecoderRun, t: WhisperTokens): Promise<string> {
  run.resetCache();
  const { logits } = await run.step([t.sot], false);
  let best: [string, number] | null = null;
  for (const [code, id] of t.languages) if (!best || logits[id]! > logits[best[1]]!) best = [code, id];
  if (!best) throw new Error('the model has no language tokens');
  return best[0];
}

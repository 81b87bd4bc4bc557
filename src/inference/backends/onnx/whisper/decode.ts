/**
 * Decoding with Whisper's rules: a window is decoded by one call into the ONNX worker
 * (greedy.ts runs the loop there); language detection is a single look-ahead step.
 */
import type { OrtRuntime } from '../../../runtime/ort-runtime.js';
import { ENCODER_OUT, type DecoderRun } from '../seq2seq.js';
import type { WhisperTokens } from './tokens.js';
import { WHISPER_WINDOW_HELPERS, WHISPER_WINDOW_PROCEDURE, whisperDecodeWindow, type WindowArgs, type WindowResult } from './greedy.js';

export { applyWhisperRules } from './greedy.js';

export interface DecodeOptions {
  temperature: number;
  /** Most tokens to sample in this window. */
  maxTokens: number;
  /** Stops the loop between two steps. */
  signal?: AbortSignal;
}

export interface DecodedWindow {
  /** Sampled tokens, end-of-text excluded. */
  tokens: number[];
  sumLogprob: number;
  avgLogprob: number;
  noSpeechProb: number;
  /** Decoder runs made. */
  steps: number;
}

/** Makes the window procedure callable on the runtime's workers. */
export function defineWhisperDecoding(runtime: OrtRuntime): void {
  runtime.define(WHISPER_WINDOW_PROCEDURE, whisperDecodeWindow, WHISPER_WINDOW_HELPERS);
}

/**
 * Decodes after `prefix` (optional previous-text prompt + the start-of-transcript
 * sequence, whose first token sits at `sotIndex`), with a fresh cache, in the worker
 * that holds `run`'s encoder output.
 */
export async function decodeWindow(
  runtime: OrtRuntime,
  run: DecoderRun,
  prefix: readonly number[],
  sotIndex: number,
  t: WhisperTokens,
  o: DecodeOptions,
): Promise<DecodedWindow> {
  run.resetCache();
  const args: WindowArgs = {
    decoder: run.decoder.key,
    state: run.state,
    encoderOut: ENCODER_OUT,
    merged: run.merged,
    pastNames: run.pastNames,
    heads: run.shape.heads,
    headDim: run.shape.headDim,
    prefix,
    sotIndex,
    noSpeech: t.noSpeech,
    rules: { eot: t.eot, timestampBegin: t.timestampBegin, suppress: t.suppress, beginSuppress: t.beginSuppress, maxInitialTimestampIndex: t.maxInitialTimestampIndex },
    temperature: o.temperature,
    maxTokens: o.maxTokens,
  };
  const out = await runtime.call<WindowResult>(WHISPER_WINDOW_PROCEDURE, args, { session: run.decoder, state: run.state, ...(o.signal ? { signal: o.signal } : {}) });
  return { ...out, avgLogprob: out.sumLogprob / (out.tokens.length + 1) };
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

/**
 * From the tokens of one window to timed segments (openai/whisper transcribe.py):
 * consecutive timestamp tokens close a segment; a window that ends on a lone timestamp
 * was fully consumed; otherwise the next window starts at the last closed timestamp.
 * Also the per-segment statistics and the word timings.
 */
import { deflateSync } from 'node:zlib';
import type { TranscriptionWord } from '../../../../domain/models/inference-backend.port.js';

/** Seconds per timestamp token and mel frames per decoder position. */
export const TIME_PRECISION = 0.02;
const FRAMES_PER_POSITION = 2;
const FRAMES_PER_SECOND = 100;

export interface TimedPiece {
  /** Seconds from the window start. */
  start: number;
  end: number;
  /** Tokens of the piece, timestamp tokens included. */
  tokens: number[];
}

/** Splits a window's tokens into pieces and says how many mel frames the window consumed. */
export function splitWindow(tokens: readonly number[], timestampBegin: number, windowFrames: number): { pieces: TimedPiece[]; consumed: number } {
  const isTs = tokens.map((id) => id >= timestampBegin);
  const time = (id: number) => (id - timestampBegin) * TIME_PRECISION;
  const n = tokens.length;
  const singleTimestampEnding = n >= 2 && !isTs[n - 2] && isTs[n - 1]!;
  const cuts: number[] = [];
  for (let i = 1; i < n; i++) if (isTs[i - 1] && isTs[i]) cuts.push(i);
  if (cuts.length === 0) {
    const stamps = tokens.filter((_, i) => isTs[i]);
    const lastStamp = stamps[stamps.length - 1];
    const duration = lastStamp !== undefined && lastStamp !== timestampBegin ? time(lastStamp) : windowFrames / FRAMES_PER_SECOND;
    return { pieces: [{ start: 0, end: duration, tokens: [...tokens] }], consumed: windowFrames };
  }
  if (singleTimestampEnding) cuts.push(n);
  const pieces: TimedPiece[] = [];
  let last = 0;
  for (const cut of cuts) {
    const slice = tokens.slice(last, cut);
    pieces.push({ start: time(slice[0]!), end: time(slice[slice.length - 1]!), tokens: slice });
    last = cut;
  }
  const consumed = singleTimestampEnding ? windowFrames : (tokens[last - 1]! - timestampBegin) * FRAMES_PER_POSITION;
  // A window must always move forward, whatever the model emitted.
  return { pieces, consumed: consumed > 0 ? Math.min(consumed, windowFrames) : windowFrames };
}

/** gzip-style compressibility of the text, the statistic whisper uses to spot repetition loops. */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length === 0 ? 0 : bytes.length / deflateSync(bytes).length;
}

/**
 * Word timings inside one segment. The exported graphs carry no cross-attention, so
 * alignment by dynamic time warping is not available: each word gets a share of the
 * segment's time proportional to its length in characters.
 */
export function wordTimings(pieces: readonly string[], start: number, end: number): TranscriptionWord[] {
  const words: string[] = [];
  for (const piece of pieces) {
    if (words.length === 0 || /^\s/.test(piece)) words.push(piece.trim());
    else words[words.length - 1] += piece;
  }
  const kept = words.filter((w) => w.length > 0);
  const total = kept.reduce((n, w) => n + w.length, 0);
  let at = start;
  return kept.map((word) => {
    const span = total > 0 ? ((end - start) * word.length) / total : 0;
    const timed = { word, start: round(at), end: round(at + span) };
    at += span;
    return timed;
  });
}

export const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

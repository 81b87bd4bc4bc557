/** Whisper's pure parts: FFT and log-mel, decoding rules, segment splitting, word timings. */
import { describe, expect, it } from 'vitest';
import { LogMel, WHISPER_MEL } from '../../../src/inference/backends/onnx/whisper/features.js';
import { applyWhisperRules } from '../../../src/inference/backends/onnx/whisper/decode.js';
import { compressionRatio, splitWindow, wordTimings } from '../../../src/inference/backends/onnx/whisper/segments.js';
import type { WhisperTokens } from '../../../src/inference/backends/onnx/whisper/tokens.js';

describe('log-mel features', () => {
  it('puts a pure tone in the mel band of its frequency and scales like Whisper', async () => {
    const mel = new LogMel();
    const tone = (hz: number) => Float32Array.from({ length: 16000 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / 16000));
    const bandOf = async (hz: number) => {
      const f = await mel.compute(tone(hz));
      const t = 50; // a frame inside the first second
      let best = 0;
      for (let m = 1; m < WHISPER_MEL.nMels; m++) if (f[m * mel.frames + t]! > f[best * mel.frames + t]!) best = m;
      return { best, f };
    };
    const low = await bandOf(300);
    const high = await bandOf(3000);
    expect(high.best).toBeGreaterThan(low.best + 10);
    expect(low.f.length).toBe(80 * 3000);
    const max = low.f.reduce((a, b) => Math.max(a, b), -Infinity);
    const min = low.f.reduce((a, b) => Math.min(a, b), Infinity);
    expect(max - min).toBeLessThanOrEqual(2 + 1e-6); // clamped to 8 (log10) below the peak, then / 4
  });
});

const T: WhisperTokens = {
  eot: 10,
  sot: 11,
  transcribe: 12,
  translate: 13,
  startOfPrev: 14,
  noSpeech: 15,
  noTimestamps: 16,
  timestampBegin: 17,
  languages: new Map([['en', 18]]),
  suppress: [11, 12, 13, 14, 15, 16],
  beginSuppress: [10],
  maxInitialTimestampIndex: 2,
};
const VOCAB = 17 + 10; // 10 text tokens, 10 timestamps (0.00 … 0.18)
const flat = () => new Float32Array(VOCAB).fill(0);
const allowed = (l: Float32Array) => [...l.keys()].filter((i) => l[i] !== -Infinity);

describe('Whisper decoding rules', () => {
  it('starts with a timestamp no later than the initial limit', () => {
    const l = flat();
    applyWhisperRules(l, [], T);
    expect(allowed(l)).toEqual([17, 18, 19]);
  });

  it('forces text after an opening timestamp and a timestamp or end after a closing one', () => {
    const afterOpen = flat();
    applyWhisperRules(afterOpen, [18], T);
    expect(allowed(afterOpen).every((i) => i <= T.eot)).toBe(true);
    const afterText = flat();
    afterText.fill(5, 17); // timestamps likelier than text: forced
    applyWhisperRules(afterText, [18, 3], T);
    expect(allowed(afterText).every((i) => i >= 19)).toBe(true); // strictly after 0.02
    const afterClose = flat();
    afterClose[T.eot] = 5; // end of text likelier than all timestamps together: not forced
    applyWhisperRules(afterClose, [18, 3, 20], T);
    expect(allowed(afterClose)).toEqual([10, ...Array.from({ length: 7 }, (_, i) => 20 + i)]); // eot or a timestamp ≥ the last
  });
});

describe('segments', () => {
  it('splits at consecutive timestamps and resumes after the last closed one', () => {
    const { pieces, consumed } = splitWindow([17, 1, 2, 20, 20, 3, 22, 22, 4], 17, 3000);
    expect(pieces.map((p) => [p.start, p.end])).toEqual([
      [0, 0.06],
      [0.06, 0.1],
    ]);
    expect(consumed).toBe(10); // 0.10 s = 10 frames
  });

  it('consumes the whole window after a lone closing timestamp or without timestamps', () => {
    expect(splitWindow([17, 1, 20, 20, 2, 25], 17, 2500).consumed).toBe(2500);
    const none = splitWindow([1, 2, 3], 17, 1200);
    expect(none).toMatchObject({ consumed: 1200, pieces: [{ start: 0, end: 12 }] });
  });

  it('times words inside a segment in order and measures compressibility', () => {
    const words = wordTimings([' Hello', ' wor', 'ld', '!'], 1, 3);
    expect(words.map((w) => w.word)).toEqual(['Hello', 'world!']);
    expect(words[0]!.start).toBe(1);
    expect(words[1]!.end).toBeCloseTo(3, 3);
    expect(compressionRatio('abc '.repeat(50))).toBeGreaterThan(5);
  });
});

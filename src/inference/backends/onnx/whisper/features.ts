/**
 * Whisper's log-mel spectrogram, as the Hugging Face WhisperFeatureExtractor computes
 * it: a window padded to 30 s, centred STFT (reflect padding, periodic Hann, n_fft 400,
 * hop 160), power spectrum through a Slaney mel filter bank, log10, clamped to 8 below
 * the maximum, scaled to (x + 4) / 4. Output [n_mels, 3000], mel-major.
 *
 * Computed in slices with yields to the event loop in between, so a long file never
 * holds the server's thread for more than a few milliseconds at a time.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';

export interface MelOptions {
  nMels: number;
  nFft: number;
  hop: number;
  nSamples: number;
  samplingRate: number;
}

export const WHISPER_MEL: MelOptions = { nMels: 80, nFft: 400, hop: 160, nSamples: 480_000, samplingRate: 16_000 };

const FRAMES_PER_SLICE = 250;

/** Mixed-radix FFT plan for one size (400 = 2·2·2·2·5·5). */
class Fft {
  private readonly factors: number[] = [];
  private readonly twRe: Float64Array;
  private readonly twIm: Float64Array;
  private readonly tmpRe = new Float64Array(16);
  private readonly tmpIm = new Float64Array(16);

  constructor(readonly n: number) {
    let rest = n;
    for (const p of [4, 2, 3, 5, 7]) {
      while (rest % p === 0) {
        this.factors.push(p);
        rest /= p;
      }
    }
    if (rest !== 1) this.factors.push(rest);
    this.twRe = new Float64Array(n);
    this.twIm = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      this.twRe[j] = Math.cos((-2 * Math.PI * j) / n);
      this.twIm[j] = Math.sin((-2 * Math.PI * j) / n);
    }
  }

  transform(inRe: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
    this.rec(inRe, 0, 1, this.n, outRe, outIm, 0, 0);
  }

  private rec(x: Float64Array, off: number, stride: number, n: number, re: Float64Array, im: Float64Array, out: number, fi: number): void {
    if (n === 1) {
      re[out] = x[off]!;
      im[out] = 0;
      return;
    }
    const p = this.factors[fi]!;
    const m = n / p;
    for (let r = 0; r < p; r++) this.rec(x, off + r * stride, stride * p, m, re, im, out + r * m, fi + 1);
    const step = this.n / n;
    const { tmpRe, tmpIm, twRe, twIm } = this;
    const tr = p <= 16 ? tmpRe : new Float64Array(p);
    const ti = p <= 16 ? tmpIm : new Float64Array(p);
    for (let k = 0; k < m; k++) {
      for (let r = 0; r < p; r++) {
        tr[r] = re[out + r * m + k]!;
        ti[r] = im[out + r * m + k]!;
      }
      for (let q = 0; q < p; q++) {
        const kk = k + q * m;
        let sr = 0;
        let si = 0;
        for (let r = 0; r < p; r++) {
          const t = ((r * kk * step) % this.n) | 0;
          sr += tr[r]! * twRe[t]! - ti[r]! * twIm[t]!;
          si += tr[r]! * twIm[t]! + ti[r]! * twRe[t]!;
        }
        re[out + kk] = sr;
        im[out + kk] = si;
      }
    }
  }
}

const hzToMel = (f: number) => (f < 1000 ? (3 * f) / 200 : 15 + (Math.log(f / 1000) * 27) / Math.log(6.4));
const melToHz = (m: number) => (m < 15 ? (200 * m) / 3 : 1000 * Math.exp(((m - 15) * Math.log(6.4)) / 27));

interface SparseFilter {
  from: number;
  weights: Float64Array;
}

/** Slaney-scale, Slaney-normalised triangular filters over the FFT bins (librosa / HF). */
function melFilters(o: MelOptions): SparseFilter[] {
  const bins = o.nFft / 2 + 1;
  const fMax = o.samplingRate / 2;
  const melMax = hzToMel(fMax);
  const edges = Array.from({ length: o.nMels + 2 }, (_, i) => melToHz((melMax * i) / (o.nMels + 1)));
  const fftFreqs = Array.from({ length: bins }, (_, i) => (fMax * i) / (bins - 1));
  return Array.from({ length: o.nMels }, (_, m) => {
    const [lo, mid, hi] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    const norm = 2 / (hi - lo);
    const weights = fftFreqs.map((f) => Math.max(0, Math.min((f - lo) / (mid - lo), (hi - f) / (hi - mid))) * norm);
    const from = weights.findIndex((w) => w > 0);
    const to = weights.length - [...weights].reverse().findIndex((w) => w > 0);
    return from < 0 ? { from: 0, weights: new Float64Array(0) } : { from, weights: Float64Array.from(weights.slice(from, to)) };
  });
}

export class LogMel {
  private readonly fft: Fft;
  private readonly window: Float64Array;
  private readonly filters: SparseFilter[];
  readonly frames: number;

  constructor(readonly options: MelOptions = WHISPER_MEL) {
    this.fft = new Fft(options.nFft);
    this.window = Float64Array.from({ length: options.nFft }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / options.nFft));
    this.filters = melFilters(options);
    this.frames = options.nSamples / options.hop;
  }

  /** Features of one window: `samples` (at most nSamples; zero-padded) → [nMels × frames]. */
  async compute(samples: Float32Array): Promise<Float32Array> {
    const { nFft, hop, nMels, nSamples } = this.options;
    const half = nFft / 2;
    const at = (i: number) => {
      const j = i < 0 ? -i : i >= nSamples ? 2 * nSamples - 2 - i : i;
      return j < samples.length ? samples[j]! : 0;
    };
    const out = new Float32Array(nMels * this.frames);
    const frame = new Float64Array(nFft);
    const re = new Float64Array(nFft);
    const im = new Float64Array(nFft);
    const power = new Float64Array(half + 1);
    let max = -Infinity;
    for (let t = 0; t < this.frames; t++) {
      if (t > 0 && t % FRAMES_PER_SLICE === 0) await yieldToLoop();
      const start = t * hop - half;
      for (let n = 0; n < nFft; n++) frame[n] = at(start + n) * this.window[n]!;
      this.fft.transform(frame, re, im);
      for (let k = 0; k <= half; k++) power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
      for (let m = 0; m < nMels; m++) {
        const { from, weights } = this.filters[m]!;
        let sum = 0;
        for (let k = 0; k < weights.length; k++) sum += weights[k]! * power[from + k]!;
        const v = Math.log10(Math.max(sum, 1e-10));
        out[m * this.frames + t] = v;
        if (v > max) max = v;
      }
    }
    for (let i = 0; i < out.length; i++) out[i] = (Math.max(out[i]!, max - 8) + 4) / 4;
    return out;
  }
}

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

const C1 = Math.cos((2 * Math.PI) / 5);
const C2 = Math.cos((4 * Math.PI) / 5);
const S1 = Math.sin((2 * Math.PI) / 5);
const S2 = Math.sin((4 * Math.PI) / 5);

/**
 * Mixed-radix FFT plan for one size (400 = 4·4·5·5): decimation in time, computed
 * iteratively from a precomputed input order and per-level twiddle tables, so the inner
 * loops are plain multiply-adds (no recursion, no index arithmetic modulo n).
 */
export class Fft {
  private readonly factors: number[] = [];
  /** Input index of each leaf, in the order the levels combine them. */
  private readonly order: Int32Array;
  /** Bottom-up: radix p, sub-transform length m, and the twiddles W_{p·m}^{r·k} (r ≥ 1) at [(r-1)·m + k]. */
  private readonly levels: { p: number; m: number; twRe: Float64Array; twIm: Float64Array }[] = [];
  /** Roots of unity W_p^j for the generic small transform, by radix. */
  private readonly roots = new Map<number, { re: Float64Array; im: Float64Array }>();
  private readonly tRe = new Float64Array(64);
  private readonly tIm = new Float64Array(64);

  constructor(readonly n: number) {
    let rest = n;
    for (const p of [4, 2, 3, 5, 7]) {
      while (rest % p === 0) {
        this.factors.push(p);
        rest /= p;
      }
    }
    if (rest !== 1) this.factors.push(rest);
    if (this.factors.some((p) => p > 64)) throw new Error(`FFT size ${n} has a prime factor above 64`);
    this.order = new Int32Array(n);
    const place = (off: number, stride: number, len: number, out: number, fi: number): void => {
      if (len === 1) {
        this.order[out] = off;
        return;
      }
      const p = this.factors[fi]!;
      for (let r = 0; r < p; r++) place(off + r * stride, stride * p, len / p, out + (r * len) / p, fi + 1);
    };
    place(0, 1, n, 0, 0);
    let size = 1;
    for (let fi = this.factors.length - 1; fi >= 0; fi--) {
      const p = this.factors[fi]!;
      const m = size;
      size *= p;
      const twRe = new Float64Array((p - 1) * m);
      const twIm = new Float64Array((p - 1) * m);
      for (let r = 1; r < p; r++) {
        for (let k = 0; k < m; k++) {
          const angle = (-2 * Math.PI * r * k) / size;
          twRe[(r - 1) * m + k] = Math.cos(angle);
          twIm[(r - 1) * m + k] = Math.sin(angle);
        }
      }
      this.levels.push({ p, m, twRe, twIm });
      if (p !== 2 && p !== 4 && p !== 5 && !this.roots.has(p)) {
        this.roots.set(p, {
          re: Float64Array.from({ length: p }, (_, j) => Math.cos((-2 * Math.PI * j) / p)),
          im: Float64Array.from({ length: p }, (_, j) => Math.sin((-2 * Math.PI * j) / p)),
        });
      }
    }
  }

  /** The DFT of the real sequence `input` (length n) into re/im. */
  transform(input: Float64Array, re: Float64Array, im: Float64Array): void {
    const { n, order, tRe, tIm } = this;
    for (let i = 0; i < n; i++) {
      re[i] = input[order[i]!]!;
      im[i] = 0;
    }
    for (const { p, m, twRe, twIm } of this.levels) {
      const size = p * m;
      const roots = this.roots.get(p);
      for (let b = 0; b < n; b += size) {
        for (let k = 0; k < m; k++) {
          const at = b + k;
          tRe[0] = re[at]!;
          tIm[0] = im[at]!;
          for (let r = 1; r < p; r++) {
            const xr = re[at + r * m]!;
            const xi = im[at + r * m]!;
            const wr = twRe[(r - 1) * m + k]!;
            const wi = twIm[(r - 1) * m + k]!;
            tRe[r] = xr * wr - xi * wi;
            tIm[r] = xr * wi + xi * wr;
          }
          if (p === 2) {
            re[at] = tRe[0]! + tRe[1]!;
            im[at] = tIm[0]! + tIm[1]!;
            re[at + m] = tRe[0]! - tRe[1]!;
            im[at + m] = tIm[0]! - tIm[1]!;
          } else if (p === 4) {
            const aRe = tRe[0]! + tRe[2]!;
            const aIm = tIm[0]! + tIm[2]!;
            const bRe = tRe[0]! - tRe[2]!;
            const bIm = tIm[0]! - tIm[2]!;
            const cRe = tRe[1]! + tRe[3]!;
            const cIm = tIm[1]! + tIm[3]!;
            // (t1 - t3)·(-i)
            const dRe = tIm[1]! - tIm[3]!;
            const dIm = tRe[3]! - tRe[1]!;
            re[at] = aRe + cRe;
            im[at] = aIm + cIm;
            re[at + m] = bRe + dRe;
            im[at + m] = bIm + dIm;
            re[at + 2 * m] = aRe - cRe;
            im[at + 2 * m] = aIm - cIm;
            re[at + 3 * m] = bRe - dRe;
            im[at + 3 * m] = bIm - dIm;
          } else if (p === 5) {
            const a1Re = tRe[1]! + tRe[4]!;
            const a1Im = tIm[1]! + tIm[4]!;
            const b1Re = tRe[1]! - tRe[4]!;
            const b1Im = tIm[1]! - tIm[4]!;
            const a2Re = tRe[2]! + tRe[3]!;
            const a2Im = tIm[2]! + tIm[3]!;
            const b2Re = tRe[2]! - tRe[3]!;
            const b2Im = tIm[2]! - tIm[3]!;
            const pRe = tRe[0]! + C1 * a1Re + C2 * a2Re;
            const pIm = tIm[0]! + C1 * a1Im + C2 * a2Im;
            const qRe = tRe[0]! + C2 * a1Re + C1 * a2Re;
            const qIm = tIm[0]! + C2 * a1Im + C1 * a2Im;
            // -i·(s1·b1 + s2·b2) and -i·(s2·b1 - s1·b2)
            const uRe = S1 * b1Im + S2 * b2Im;
            const uIm = -(S1 * b1Re + S2 * b2Re);
            const vRe = S2 * b1Im - S1 * b2Im;
            const vIm = -(S2 * b1Re - S1 * b2Re);
            re[at] = tRe[0]! + a1Re + a2Re;
            im[at] = tIm[0]! + a1Im + a2Im;
            re[at + m] = pRe + uRe;
            im[at + m] = pIm + uIm;
            re[at + 4 * m] = pRe - uRe;
            im[at + 4 * m] = pIm - uIm;
            re[at + 2 * m] = qRe + vRe;
            im[at + 2 * m] = qIm + vIm;
            re[at + 3 * m] = qRe - vRe;
            im[at + 3 * m] = qIm - vIm;
          } else {
            const w = roots!;
            for (let q = 0; q < p; q++) {
              let sr = 0;
              let si = 0;
              for (let r = 0, j = 0; r < p; r++, j = (j + q) % p) {
                sr += tRe[r]! * w.re[j]! - tIm[r]! * w.im[j]!;
                si += tRe[r]! * w.im[j]! + tIm[r]! * w.re[j]!;
              }
              re[at + q * m] = sr;
              im[at + q * m] = si;
            }
          }
        }
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

import { describe, expect, it } from 'vitest';
import { shortestFloat32, vectorNumbers } from '../../src/domain/completions/float32.js';

/** Deterministic float32 bit patterns: every exponent, both signs, subnormals included. */
function float32Samples(count: number): Float32Array {
  const bits = new Uint32Array(count);
  let state = 0x9e3779b9;
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bits[i] = state >>> 0;
  }
  return new Float32Array(bits.buffer);
}

const significantDigits = (x: number) => x.toExponential().split('e')[0]!.replace(/[-.]/g, '').length;

describe('shortestFloat32', () => {
  it('reads back as the same float32 through JSON, in at most 9 significant digits', () => {
    const samples = float32Samples(200_000).filter((x) => Number.isFinite(x));
    let longest = 0;
    for (const x of samples) {
      const printed = JSON.parse(JSON.stringify(shortestFloat32(x))) as number;
      if (Math.fround(printed) !== x) throw new Error(`${x} came back as ${printed}`);
      if (Math.abs(x) > 1e-30 && Math.abs(x) < 1e30) longest = Math.max(longest, significantDigits(printed));
    }
    expect(longest).toBeLessThanOrEqual(9);
  });

  it('shortens what a widened float32 prints, and keeps zero and non-finite values', () => {
    expect(String(Math.fround(0.1))).toBe('0.10000000149011612');
    expect(shortestFloat32(Math.fround(0.1))).toBe(0.1);
    expect(shortestFloat32(Math.fround(-0.0051248497))).toBe(-0.0051248497);
    expect(shortestFloat32(0)).toBe(0);
    expect(shortestFloat32(Infinity)).toBe(Infinity);
    expect(shortestFloat32(NaN)).toBeNaN();
  });

  it('leaves vectors of doubles (an upstream’s) unchanged', () => {
    const doubles = [0.1234567890123, -0.5];
    expect(vectorNumbers(doubles)).toEqual(doubles);
    expect(vectorNumbers(Float32Array.of(0.25, Math.fround(1 / 3)))).toEqual([0.25, 0.33333334]);
  });
});

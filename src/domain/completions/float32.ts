/**
 * Float32 vectors on the wire. A float32 widened to a double prints with up to 17
 * digits (0.005124849732965231), yet 9 significant digits always identify a float32,
 * and most need 7 or 8 (0.0051248497): the same values in about 40% fewer bytes, which
 * also cost less to write and to parse.
 */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * The double nearest the shortest decimal (at most 9 significant digits) that reads back
 * as the same float32 as `x`; JSON.stringify prints it with those digits. Zero and
 * non-finite values are returned as they are.
 */
export function shortestFloat32(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const magnitude = Math.abs(x);
  let exponent = Math.floor(Math.log10(magnitude));
  // log10 can land one off next to a power of ten.
  if (exponent >= -22 && exponent <= 22) {
    if (POWERS_OF_TEN[Math.abs(exponent)]! ** Math.sign(exponent) > magnitude) exponent--;
  }
  for (let digits = 7; digits <= 8; digits++) {
    const places = digits - 1 - exponent;
    // m / 10^p, both exact, is the double nearest the decimal m·10^-p (IEEE division rounds correctly).
    let candidate: number;
    if (places >= 0 && places <= 22) candidate = Math.round(magnitude * POWERS_OF_TEN[places]!) / POWERS_OF_TEN[places]!;
    else if (places < 0 && places >= -22) candidate = Math.round(magnitude / POWERS_OF_TEN[-places]!) * POWERS_OF_TEN[-places]!;
    else break;
    if (Math.fround(candidate) === magnitude) return x < 0 ? -candidate : candidate;
  }
  // Nine significant digits, correctly rounded, always identify a float32.
  const nine = Number(magnitude.toPrecision(9));
  return x < 0 ? -nine : nine;
}

/** A vector as JSON numbers: float32 values in their shortest form, doubles unchanged. */
export function vectorNumbers(vector: Float32Array | readonly number[]): number[] {
  if (!(vector instanceof Float32Array)) return Array.from(vector);
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = shortestFloat32(vector[i]!);
  return out;
}

/** Little-endian float32 bytes in base64, as OpenAI's `encoding_format: base64`. */
export function float32Base64(vector: ArrayLike<number>): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

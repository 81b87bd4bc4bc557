/**
 * Identifier generation. Object ids are time-ordered (a ULID-style 48-bit millisecond
 * clock followed by 80 random bits, Crockford base32), so "newest first" and the
 * `after` cursor of every list are plain comparisons on the id.
 */
import { randomFillSync, randomUUID } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Random bytes from a pooled CSPRNG buffer: one randomFillSync per 4 KiB instead of a
 * system call per id (ids are made on every request).
 */
const POOL = Buffer.allocUnsafe(4096);
let poolOffset = POOL.length;

/** The offset of `bytes` fresh bytes in the pool; the caller reads them and then wipe()s them. */
function reserve(bytes: number): number {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += bytes;
  return at;
}

/** Random bytes are used once: zeroed in the pool as soon as they were read. */
const wipe = (at: number, bytes: number): void => void POOL.fill(0, at, at + bytes);

/** Copies `target.length` pooled random bytes into `target`. */
function fillRandom(target: Uint8Array): void {
  const at = reserve(target.length);
  for (let i = 0; i < target.length; i++) target[i] = POOL[at + i]!;
  wipe(at, target.length);
}

/** `bytes` random bytes as a hex or base64url string, read straight from the pool (no Buffer per id). */
export function randomString(bytes: number, encoding: 'hex' | 'base64url'): string {
  const at = reserve(bytes);
  const text = POOL.toString(encoding, at, at + bytes);
  wipe(at, bytes);
  return text;
}

let lastMs = -1;
/** The random part of the last id; reused in place (ids are made on every request). */
const lastRandom = new Uint8Array(10);
const idBytes = new Uint8Array(16);

const CROCKFORD_CODES = Buffer.from(CROCKFORD, 'latin1');
/** Where an id's characters are written before they become one string (ids are made on every request). */
const encoded = Buffer.allocUnsafe(32);

/**
 * Crockford base32 of `bytes` (at most 20), cut to `chars` characters. The characters are
 * written into a buffer and read out as one flat string: built by `+=`, the id was a
 * chain of 26 pieces that had to be flattened again when hashed or stored.
 */
function encodeBase32(bytes: Uint8Array, chars: number): string {
  let bits = 0;
  let value = 0;
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    value = (value << 8) | bytes[i]!;
    bits += 8;
    while (bits >= 5) {
      encoded[length++] = CROCKFORD_CODES[(value >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) encoded[length++] = CROCKFORD_CODES[(value << (5 - bits)) & 31]!;
  return encoded.toString('latin1', 0, Math.min(length, chars));
}

function incrementInPlace(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] === 255) {
      bytes[i] = 0;
    } else {
      bytes[i] = bytes[i]! + 1;
      return;
    }
  }
}

/** 26-character, lexicographically sortable, monotonic within this process. */
export function sortableId(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    incrementInPlace(lastRandom);
  } else {
    lastMs = nowMs;
    fillRandom(lastRandom);
  }
  let t = Math.max(nowMs, lastMs);
  for (let i = 5; i >= 0; i--) {
    idBytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  idBytes.set(lastRandom, 6);
  return encodeBase32(idBytes, 26);
}

export const newId = (prefix: string): string => `${prefix}${sortableId()}`;

/** A random token of `bytes` bytes, base64url. */
export const randomToken = (bytes: number): string => randomString(bytes, 'base64url');

export const newRequestId = (): string => `req_${randomString(12, 'hex')}`;

export const newUuid = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);

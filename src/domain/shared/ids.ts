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
export function takeRandom(bytes: number): Buffer {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const out = Buffer.from(POOL.subarray(poolOffset, poolOffset + bytes));
  POOL.fill(0, poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

let lastMs = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

function encodeBase32(bytes: Uint8Array, chars: number): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out.slice(0, chars);
}

function incrementRandom(bytes: Uint8Array): Uint8Array {
  const next = Uint8Array.from(bytes);
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] === 255) {
      next[i] = 0;
    } else {
      next[i] = next[i]! + 1;
      break;
    }
  }
  return next;
}

/** 26-character, lexicographically sortable, monotonic within this process. */
export function sortableId(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    lastRandom = incrementRandom(lastRandom);
  } else {
    lastMs = nowMs;
    lastRandom = new Uint8Array(takeRandom(10));
  }
  const time = new Uint8Array(6);
  let t = Math.max(nowMs, lastMs);
  for (let i = 5; i >= 0; i--) {
    time[i] = t % 256;
    t = Math.floor(t / 256);
  }
  const bytes = new Uint8Array(16);
  bytes.set(time, 0);
  bytes.set(lastRandom, 6);
  return encodeBase32(bytes, 26);
}

export const newId = (prefix: string): string => `${prefix}${sortableId()}`;

/** A random token of `bytes` bytes, base64url. */
export const randomToken = (bytes: number): string => takeRandom(bytes).toString('base64url');

export const newRequestId = (): string => `req_${takeRandom(12).toString('hex')}`;

export const newUuid = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);

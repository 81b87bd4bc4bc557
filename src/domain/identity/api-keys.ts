/**
 * API keys: `sk-sluice-` followed by 256 random bits (base64url). Only the SHA-256 of a
 * key is stored; the plaintext is returned once, at creation. The visible prefix lets
 * an operator recognise a key in listings without being able to use it.
 */
import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../shared/ids.js';

export const API_KEY_PREFIX = 'sk-sluice-';
const VISIBLE_PREFIX_CHARS = API_KEY_PREFIX.length + 6;

// crypto.hash: one call, no Hash object (this runs on every authenticated request).
export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  return { key, prefix: key.slice(0, VISIBLE_PREFIX_CHARS), hash: hashApiKey(key) };
}

/** Constant-time comparison of two SHA-256 hex digests (no extra hashing: both are fixed-length). */
export function hashesEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

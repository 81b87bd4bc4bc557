/** Sortable ids, request ids, money conversion and rounding, API key format. */
import { describe, expect, it } from 'vitest';
import { isUuid, newId, newRequestId, newUuid, randomString, randomToken, sortableId } from '../../src/domain/shared/ids.js';
import { costMicros, microsToUsd, usdToMicros } from '../../src/domain/shared/money.js';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, secretsEqual } from '../../src/domain/identity/api-keys.js';

describe('sortable ids', () => {
  it('10k ids are unique, 26 Crockford characters, and strictly increasing', () => {
    const ids = Array.from({ length: 10_000 }, () => sortableId());
    expect(new Set(ids).size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('stay monotonic when the clock stands still or goes backwards', () => {
    const t = Date.now() + 10_000;
    const ids = [sortableId(t), sortableId(t), sortableId(t - 5_000), sortableId(t), sortableId(t + 1)];
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('sort by time across milliseconds', () => {
    const base = Date.now() + 20_000;
    const first = sortableId(base);
    const next = sortableId(base + 1);
    const much = sortableId(base + 1_000_000);
    expect(next > first).toBe(true);
    expect(much > next).toBe(true);
    // The first 10 characters are the 48-bit millisecond time.
    expect(next.slice(0, 10)).not.toBe(first.slice(0, 10));
  });

  it('spell the 48-bit millisecond time in Crockford base32, most significant bits first', () => {
    const at = Date.now() + 10_000_000; // past any time the tests above used (ids never go back in time)
    const id = sortableId(at);
    const bits = [...id].map((c) => '0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c).toString(2).padStart(5, '0')).join('');
    expect(id).toMatch(/^[0-9a-hjkmnp-tv-z]{26}$/);
    expect(parseInt(bits.slice(0, 48), 2)).toBe(at);
  });

  it('prefixed ids carry the prefix', () => {
    expect(newId('usage_')).toMatch(/^usage_[0-9a-z]{26}$/);
  });
});

describe('request ids and UUIDs', () => {
  it('request ids are req_ and 24 hex characters, unique', () => {
    const ids = Array.from({ length: 1000 }, newRequestId);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(1000);
  });

  it('random strings are read straight from the pool: right length, never repeated, across pool refills', () => {
    // 3,000 × 15 bytes is about eleven 4 KiB pools.
    const hex = Array.from({ length: 3000 }, () => randomString(15, 'hex'));
    for (const id of hex) expect(id).toMatch(/^[0-9a-f]{30}$/);
    const tokens = Array.from({ length: 3000 }, () => randomToken(15));
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(new Set([...hex, ...tokens.map((t) => Buffer.from(t, 'base64url').toString('hex'))]).size).toBe(6000);
  });

  it('isUuid accepts UUIDs in either case and nothing else', () => {
    const id = newUuid();
    expect(isUuid(id)).toBe(true);
    expect(isUuid(id.toUpperCase())).toBe(true);
    for (const bad of ['', 'proj_1', `${id}0`, id.slice(1), id.replaceAll('-', ''), ` ${id}`]) expect(isUuid(bad)).toBe(false);
  });
});

describe('money', () => {
  it('converts dollars to integer micro-dollars and back', () => {
    expect(usdToMicros(1)).toBe(1_000_000);
    expect(usdToMicros(0.1 + 0.2)).toBe(300_000);
    expect(usdToMicros(-5.25)).toBe(-5_250_000);
    expect(usdToMicros(0.0000014)).toBe(1);
    expect(microsToUsd(1_234_567)).toBe(1.234567);
  });

  it('costMicros: USD per million tokens is micro-dollars per token, rounded up', () => {
    const price = { inputPerMillionUsd: 0.15, outputPerMillionUsd: 0.6 };
    expect(costMicros(price, 1_000_000, 0)).toBe(150_000);
    expect(costMicros(price, 4_000, 100)).toBe(660);
    expect(costMicros(price, 1, 0)).toBe(1); // 0.15 → 1: no billable call is free
    expect(costMicros(price, 10, 0)).toBe(2); // 1.5 → 2
    expect(costMicros(price, 20, 0)).toBe(3); // 3.0000000000000004 in floats → still 3
    expect(costMicros({ inputPerMillionUsd: 0.07, outputPerMillionUsd: 0.14 }, 100, 100)).toBe(21);
    expect(costMicros(price, 0, 0)).toBe(0);
    expect(costMicros({ inputPerMillionUsd: 0, outputPerMillionUsd: 0 }, 1000, 1000)).toBe(0);
  });

  it('costMicros: cached input at its own price, the input price when unset, capped at the input count', () => {
    const price = { inputPerMillionUsd: 2, outputPerMillionUsd: 4, cachedInputPerMillionUsd: 0.5, cacheWritePerMillionUsd: 3 };
    // 200 uncached × 2 + 800 cached × 0.5 + 100 out × 4.
    expect(costMicros(price, 1000, 100, { cachedInputTokens: 800 })).toBe(1200);
    // 100 uncached × 2 + 800 cached × 0.5 + 100 written × 3 + 100 out × 4.
    expect(costMicros(price, 1000, 100, { cachedInputTokens: 800, cacheWriteTokens: 100 })).toBe(1300);
    // No cached price: every input token at the input price, never free.
    expect(costMicros({ inputPerMillionUsd: 2, outputPerMillionUsd: 4 }, 1000, 100, { cachedInputTokens: 800, cacheWriteTokens: 100 })).toBe(2400);
    // A free cached price is the operator's choice: 200 × 2 + 100 × 4.
    expect(costMicros({ inputPerMillionUsd: 2, outputPerMillionUsd: 4, cachedInputPerMillionUsd: 0 }, 1000, 100, { cachedInputTokens: 800 })).toBe(800);
    // An engine that reports more cached tokens than input tokens: all of the input is cached, no more.
    expect(costMicros(price, 10, 0, { cachedInputTokens: 50, cacheWriteTokens: 50 })).toBe(5);
    // One rounding up over the whole call: 3 cached × 0.5 = 1.5 → 2.
    expect(costMicros(price, 3, 0, { cachedInputTokens: 3 })).toBe(2);
  });
});

describe('API keys', () => {
  it('are sk-sluice- and 43 base64url characters (256 bits), with a 16-character visible prefix', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(key).toMatch(/^sk-sluice-[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.slice(API_KEY_PREFIX.length), 'base64url')).toHaveLength(32);
    expect(prefix).toBe(key.slice(0, 16));
    expect(hash).toBe(hashApiKey(key));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are unique and their random part looks random', () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey().key.slice(API_KEY_PREFIX.length));
    expect(new Set(keys).size).toBe(2000);
    // Each base64url character of the first 42 carries 6 random bits: all 64 symbols show up.
    const symbols = new Set(keys.join('').split(''));
    expect(symbols.size).toBe(64);
  });

  it('secretsEqual compares exactly', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { cosineSimilarity, preview, rankedScores } from './vectors.js';

describe('embeddings and moderation playground logic', () => {
  it('computes cosine similarity', () => {
    expect(cosineSimilarity([1, 0], [1, 0])).toBe(1);
    expect(cosineSimilarity([1, 0], [0, 2])).toBe(0);
    expect(cosineSimilarity([1, 1], [-1, -1])).toBeCloseTo(-1, 12);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
    expect(() => cosineSimilarity([1], [1, 2])).toThrow('different lengths');
  });
  it('previews the first components', () => {
    expect(preview([0.123456, -1, 2], 2)).toBe('[0.1235, -1.0000, …]');
    expect(preview([1], 2)).toBe('[1.0000]');
  });
  it('ranks category scores', () => {
    expect(rankedScores({ b: 0.2, a: 0.2, c: 0.9 })).toEqual([['c', 0.9], ['a', 0.2], ['b', 0.2]]);
  });
});

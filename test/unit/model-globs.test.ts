/** The model patterns of a key's policy: what they match, which pairs overlap, which are refused. */
import { describe, expect, it } from 'vitest';
import { firstOverlap, modelMatcher, patternProblem, patternsOverlap } from '../../src/domain/identity/model-globs.js';

describe('model patterns', () => {
  it('match names case-insensitively, `*` across slashes and `?` one character', () => {
    const allowed = modelMatcher(['small-*', 'org/*-mini', 'gpt-4o', 'v?']);
    expect(['small-a', 'SMALL-', 'org/x-mini', 'org/a/b-mini', 'GPT-4o', 'v1'].map(allowed)).toEqual([true, true, true, true, true, true]);
    expect(['small', 'big-small-a', 'org/x-mini2', 'gpt-4o-mini', 'v10', 'v'].map(allowed)).toEqual([false, false, false, false, false, false]);
  });

  it('treat regular-expression characters literally', () => {
    const allowed = modelMatcher(['a.b+c', 'x$']);
    expect([allowed('a.b+c'), allowed('aXb+c'), allowed('abbc'), allowed('x$'), allowed('x')]).toEqual([true, false, false, true, false]);
  });

  it('overlap exactly when some name matches both', () => {
    const cases: Array<[string, string, boolean]> = [
      ['small-*', 'small-*', true],
      ['small-*', '*-mini', true],
      ['gpt-4o*', 'gpt-4o-mini', true],
      ['*', 'anything', true],
      ['a?c', 'ab*', true],
      ['small-*', 'big-*', false],
      ['*-mini', '*-max', false],
      ['a?', 'abc', false],
      ['gpt-4o', 'gpt-4o-mini', false],
      ['a*b', 'b*a', false],
    ];
    for (const [a, b, overlap] of cases) {
      expect([a, b, patternsOverlap(a, b)]).toEqual([a, b, overlap]);
      expect([b, a, patternsOverlap(b, a)]).toEqual([b, a, overlap]);
    }
    expect(firstOverlap(['a-*', 'b-*', 'B-1'])).toEqual(['b-*', 'B-1']);
    expect(firstOverlap(['a-*', 'b-*'])).toBeNull();
  });

  it('refuse empty, long, spaced and foreign glob syntax', () => {
    expect(['', 'a b', 'a[bc]', 'a{b,c}', 'a\\b', 'a**', 'x'.repeat(201)].map(patternProblem)).toEqual([
      'is empty',
      'may hold only printable characters without spaces',
      'uses glob syntax other than * and ?',
      'uses glob syntax other than * and ?',
      'uses glob syntax other than * and ?',
      'repeats *',
      'is longer than 200 characters',
    ]);
    expect(['small-*', 'org/model:v1', 'a?b'].map(patternProblem)).toEqual([null, null, null]);
  });
});

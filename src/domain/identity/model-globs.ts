/**
 * The model patterns of a key's policy: a name, or a glob where `*` stands for any run of
 * characters and `?` for one; matched case-insensitively, as models and aliases are.
 *
 * Written here rather than taken from a glob library (picomatch, minimatch): those match
 * paths (`*` stops at `/`, which model names such as `org/model` contain) and cannot tell
 * whether two patterns overlap, which a policy must refuse. With only `*` and `?`, whether
 * two patterns both match some name is decided exactly by a walk over their positions.
 */

/** At most this many characters in one pattern. */
export const MAX_PATTERN_LENGTH = 200;

/** What a pattern may hold: printable ASCII without spaces or the characters other globs give meaning to. */
const PATTERN_CHARS = /^[!#-'*-Z^-z|~]+$/;
const OTHER_GLOB_SYNTAX = /[[\]{}\\]/;

/** Why `pattern` is not a model pattern, or null when it is one. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length === 0) return 'is empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (OTHER_GLOB_SYNTAX.test(pattern)) return 'uses glob syntax other than * and ?';
  if (!PATTERN_CHARS.test(pattern)) return 'may hold only printable characters without spaces';
  if (pattern.includes('**')) return 'repeats *';
  return null;
}

const isGlob = (pattern: string): boolean => pattern.includes('*') || pattern.includes('?');

/**
 * True when some name matches both patterns (both already lower-case). A walk over pairs
 * of positions: a `*` may match nothing (step past it) or one more character of the other
 * side's (that side steps, the star stays); two single characters meet when equal or
 * either is `?`.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const seen = new Set<number>();
  const width = b.length + 1;
  const stack: Array<[number, number]> = [[0, 0]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    if (seen.has(i * width + j)) continue;
    seen.add(i * width + j);
    if (i === a.length && j === b.length) return true;
    const x = a[i];
    const y = b[j];
    if (x === '*') stack.push([i + 1, j]);
    if (y === '*') stack.push([i, j + 1]);
    if (x === undefined || y === undefined) continue;
    if (x === '*' && y !== '*') stack.push([i, j + 1]);
    else if (y === '*' && x !== '*') stack.push([i + 1, j]);
    else if (x !== '*' && y !== '*' && (x === y || x === '?' || y === '?')) stack.push([i + 1, j + 1]);
  }
  return false;
}

/** The first pair of patterns that overlap (a duplicate is the plainest overlap), or null. */
export function firstOverlap(patterns: readonly string[]): [string, string] | null {
  const lower = patterns.map((p) => p.toLowerCase());
  for (let i = 0; i < lower.length; i++) {
    for (let j = i + 1; j < lower.length; j++) if (patternsOverlap(lower[i]!, lower[j]!)) return [patterns[i]!, patterns[j]!];
  }
  return null;
}

const escapeRegExp = (text: string): string => text.replace(/[.+^$()|]/g, '\\$&');

/** A test for names against `patterns`: exact names by a set, globs by one regular expression. */
export function modelMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !isGlob(p)).map((p) => p.toLowerCase()));
  const globs = patterns.filter(isGlob).map((p) => escapeRegExp(p).replaceAll('*', '.*').replaceAll('?', '.'));
  const regex = globs.length === 0 ? null : new RegExp(`^(?:${globs.join('|')})$`, 'is');
  return (name) => {
    const lower = name.toLowerCase();
    return exact.has(lower) || (regex !== null && regex.test(lower));
  };
}

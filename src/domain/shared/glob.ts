/** Glob patterns of names (model aliases): `*` any run of characters, `?` one character, the rest literal. */

/** `pattern` as an anchored, case-insensitive regular expression. */
export function globRegExp(pattern: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\-]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 'i');
}

export const isGlob = (pattern: string) => /[*?]/.test(pattern);

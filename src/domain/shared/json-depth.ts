/**
 * How deeply a JSON text nests, measured on the text itself before it is parsed.
 *
 * Our own scan because neither JSON.parse nor secure-json-parse has a depth option, and
 * the depth matters later: JSON.stringify and every recursive walk of a parsed body
 * overflow the stack a few thousand levels down. One pass over the characters, no
 * allocation, no recursion; it stops at the first level over the limit. It only counts
 * brackets outside strings, so it is meaningful for valid JSON and harmless for invalid
 * JSON (which the parser rejects anyway).
 */

/** Deepest nesting a request body or a batch line may have; `{"a": {}}` is 2 levels. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/** Whether `text` nests objects and arrays deeper than `limit` levels. */
export function jsonNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

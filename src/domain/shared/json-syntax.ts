/**
 * Where a JSON text stops being JSON, and why, in Sluice's own words.
 *
 * JSON.parse names the place in some of its messages ("… at position 13") and not in
 * others (`Unexpected token '}', "…[}" is not valid JSON`), and its wording changes
 * between Node versions (Node 22 appends "(line 1 column 6)"). Answers must name the
 * place every time and read the same on every Node, so this scanner finds the first fault
 * itself. Callers run it only after JSON.parse has refused a text: valid bodies pay nothing.
 *
 * Why not a library: parse-json and its kin read V8's message, which is the problem;
 * jsonc-parser accepts comments and trailing commas (two of the commonest mistakes) and
 * names faults by code, not by what was expected; a full parser with positions (momoa)
 * builds a tree only to throw it away and words faults its own way. A validator of
 * RFC 8259's grammar is small.
 *
 * One pass, no recursion: the open objects and arrays are a stack of their brackets, so
 * the depth of a text cannot overflow the call stack. A byte-order mark is not JSON; the
 * body parsers strip it before parsing (stripByteOrderMark) and scan what they parsed.
 */

/** The first fault in a JSON text: a UTF-16 offset into it, and what was wrong there. */
export interface JsonFault {
  offset: number;
  reason: string;
}

/** `text` without a leading byte-order mark, which JSON parsers of request bodies skip. */
export const stripByteOrderMark = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** What the scanner expects next, and how it words a fault there. */
type Expect = 'value' | 'first-value' | 'next-value' | 'first-key' | 'next-key' | 'colon' | 'after-member' | 'after-element' | 'end';

const EXPECTED: Record<Expect, string> = {
  value: 'Expected a value',
  'first-value': "Expected a value or ']'",
  'next-value': "Expected a value after ','",
  'first-key': "Expected a property name in double quotes or '}'",
  'next-key': "Expected a property name in double quotes after ','",
  colon: "Expected ':' after the property name",
  'after-member': "Expected ',' or '}' after the property value",
  'after-element': "Expected ',' or ']' after the array element",
  end: 'Expected the end of the input after the JSON value',
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** A run of characters a reader sees as one token: a word, a number, `gpt-4`, `.5`. */
const WORD = /[A-Za-z0-9_$.+-]+/y;
const LONGEST_WORD_SHOWN = 24;
const LITERALS = new Set(['true', 'false', 'null']);
const NOT_JSON_NUMBERS = new Set(['NaN', 'Infinity']);
const OTHER_LANGUAGES_LITERALS = new Set(['True', 'False', 'None', 'TRUE', 'FALSE', 'NULL', 'Null', 'undefined', 'nil']);

function wordAt(text: string, at: number): string {
  WORD.lastIndex = at;
  return WORD.exec(text)?.[0] ?? '';
}

/** What stands at `at`, as a reader would name it, with a hint for the mistakes people make. */
function foundAt(text: string, at: number): string {
  if (at >= text.length) return 'the end of the input';
  const c = text.charCodeAt(at);
  if (c === QUOTE) return 'a string';
  if (c === 0x27) return 'a single quote; JSON strings take double quotes';
  if (c === 0x2f && (text[at + 1] === '/' || text[at + 1] === '*')) return "'/'; JSON has no comments";
  const word = wordAt(text, at);
  if (word.length > 0) {
    const shown = word.length > LONGEST_WORD_SHOWN ? `'${word.slice(0, LONGEST_WORD_SHOWN)}…'` : `'${word}'`;
    if (NOT_JSON_NUMBERS.has(word)) return `${shown}; JSON has no NaN or Infinity`;
    if (OTHER_LANGUAGES_LITERALS.has(word)) return `${shown}; JSON's literals are true, false and null`;
    return shown;
  }
  const char = String.fromCodePoint(text.codePointAt(at)!);
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(char) ? `'${char}'` : `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

const faultAt = (text: string, offset: number, expected: string, hint = ''): JsonFault => ({
  offset,
  reason: `${expected}, found ${foundAt(text, offset)}${hint}`,
});

const TRAILING_COMMA = '; JSON allows no trailing comma';
const HEX4 = /[0-9A-Fa-f]{4}/y;
const SIMPLE_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** The offset just past the string opening at `start`, or its fault. */
function scanString(text: string, start: number): number | JsonFault {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === 0x0a || c === 0x0d) return { offset: start, reason: 'Unterminated string: no closing quote before the end of the line' };
    if (c < 0x20) {
      const written = c === 0x09 ? '\\t' : `\\u${c.toString(16).padStart(4, '0')}`;
      return { offset: i, reason: `A control character (${foundAt(text, i)}) must be escaped in a string; write it as ${written}` };
    }
    if (c !== BACKSLASH) continue;
    const escaped = text[i + 1];
    if (escaped === undefined) break;
    if (escaped === 'u') {
      HEX4.lastIndex = i + 2;
      if (!HEX4.test(text)) return { offset: i, reason: `Invalid escape '${text.slice(i, i + 6)}' in a string; \\u takes four hex digits` };
      i += 5;
    } else if (SIMPLE_ESCAPES.has(escaped)) {
      i += 1;
    } else {
      const shown = String.fromCodePoint(text.codePointAt(i + 1)!);
      return { offset: i, reason: `Invalid escape '\\${shown}' in a string; the escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX` };
    }
  }
  return { offset: start, reason: 'Unterminated string: no closing quote before the end of the input' };
}

/** The offset just past the digits from `at` (at least one), or the fault when there is none. */
function scanDigits(text: string, at: number, expected: string): number | JsonFault {
  if (!isDigit(text.charCodeAt(at))) return faultAt(text, at, expected);
  let i = at;
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

/** The offset just past the number starting at `start` (a '-' or a digit), or its fault. */
function scanNumber(text: string, start: number): number | JsonFault {
  let i = text.charCodeAt(start) === MINUS ? start + 1 : start;
  if (text.charCodeAt(i) === 0x30) {
    if (isDigit(text.charCodeAt(i + 1))) return faultAt(text, start, 'Expected a number without leading zeros');
    i += 1;
  } else {
    const end = scanDigits(text, i, "Expected a digit after '-'");
    if (typeof end !== 'number') return end;
    i = end;
  }
  if (text[i] === '.') {
    const end = scanDigits(text, i + 1, 'Expected a digit after the decimal point');
    if (typeof end !== 'number') return end;
    i = end;
  }
  if (text[i] === 'e' || text[i] === 'E') {
    const sign = text[i + 1] === '+' || text[i + 1] === '-' ? 1 : 0;
    const end = scanDigits(text, i + 1 + sign, 'Expected a digit in the exponent');
    if (typeof end !== 'number') return end;
    i = end;
  }
  return i;
}

/** The offset just past the scalar value at `at` (string, number or literal), or its fault. */
function scanScalar(text: string, at: number, expect: Expect): number | JsonFault {
  const c = text.charCodeAt(at);
  if (c === QUOTE) return scanString(text, at);
  if (c === MINUS || isDigit(c)) return scanNumber(text, at);
  const word = wordAt(text, at);
  if (LITERALS.has(word)) return at + word.length;
  const closes = c === CLOSE_BRACKET || c === CLOSE_BRACE;
  return faultAt(text, at, EXPECTED[expect], expect === 'next-value' && closes ? TRAILING_COMMA : '');
}

/** Scanner state: the offset reached, the brackets still open, and what comes next. */
interface Scan {
  at: number;
  open: number[];
  expect: Expect;
}

/** After a complete value: what its container (or the end of the text) wants next. */
function afterValue(scan: Scan): void {
  const top = scan.open.at(-1);
  scan.expect = top === undefined ? 'end' : top === OPEN_BRACE ? 'after-member' : 'after-element';
}

function close(scan: Scan): void {
  scan.open.pop();
  scan.at += 1;
  afterValue(scan);
}

/** One step at a value position: opens a container or passes a scalar. */
function stepValue(text: string, scan: Scan, c: number): JsonFault | null {
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    scan.open.push(c);
    scan.at += 1;
    scan.expect = c === OPEN_BRACE ? 'first-key' : 'first-value';
    return null;
  }
  const end = scanScalar(text, scan.at, scan.expect);
  if (typeof end !== 'number') return end;
  scan.at = end;
  afterValue(scan);
  return null;
}

/** One step at a property-name position. */
function stepKey(text: string, scan: Scan, c: number): JsonFault | null {
  if (c !== QUOTE) return faultAt(text, scan.at, EXPECTED[scan.expect], scan.expect === 'next-key' && c === CLOSE_BRACE ? TRAILING_COMMA : '');
  const end = scanString(text, scan.at);
  if (typeof end !== 'number') return end;
  scan.at = end;
  scan.expect = 'colon';
  return null;
}

/** One step after a value inside a container: a ',' or the container's closing bracket. */
function stepSeparator(text: string, scan: Scan, c: number): JsonFault | null {
  const inObject = scan.expect === 'after-member';
  if (c === COMMA) {
    scan.at += 1;
    scan.expect = inObject ? 'next-key' : 'next-value';
  } else if (c === (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
    close(scan);
  } else {
    return faultAt(text, scan.at, EXPECTED[scan.expect]);
  }
  return null;
}

function step(text: string, scan: Scan, c: number): JsonFault | null {
  switch (scan.expect) {
    case 'first-key':
      if (c !== CLOSE_BRACE) return stepKey(text, scan, c);
      close(scan);
      return null;
    case 'next-key':
      return stepKey(text, scan, c);
    case 'first-value':
      if (c !== CLOSE_BRACKET) return stepValue(text, scan, c);
      close(scan);
      return null;
    case 'value':
    case 'next-value':
      return stepValue(text, scan, c);
    case 'colon':
      if (c !== COLON) return faultAt(text, scan.at, EXPECTED.colon);
      scan.at += 1;
      scan.expect = 'value';
      return null;
    case 'after-member':
    case 'after-element':
      return stepSeparator(text, scan, c);
    case 'end':
      return faultAt(text, scan.at, EXPECTED.end);
  }
}

/** The first fault of `text` as JSON (RFC 8259, as JSON.parse reads it), or null when it is valid. */
export function findJsonFault(text: string): JsonFault | null {
  const scan: Scan = { at: 0, open: [], expect: 'value' };
  for (;;) {
    while (isSpace(text.charCodeAt(scan.at))) scan.at++;
    if (scan.at >= text.length) return scan.expect === 'end' ? null : faultAt(text, scan.at, EXPECTED[scan.expect]);
    const fault = step(text, scan, text.charCodeAt(scan.at));
    if (fault) return fault;
  }
}

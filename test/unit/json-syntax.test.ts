/**
 * The JSON fault scanner: the place and reason of the first fault, independent of V8's
 * wording, and the same verdict as JSON.parse on what is valid.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonErrorPlace, placeAndReason } from '../../src/domain/shared/json-position.js';
import { findJsonFault, stripByteOrderMark } from '../../src/domain/shared/json-syntax.js';
import { JSON_MISTAKES } from '../helpers/json-mistakes.js';

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('jsonErrorPlace on the ten commonest mistakes', () => {
  it.each(JSON_MISTAKES.map((m) => [m.name, m] as const))('%s', (_name, mistake) => {
    expect(parses(mistake.text)).toBe(false);
    expect(jsonErrorPlace(mistake.text)).toEqual({ index: mistake.index, line: mistake.line, column: mistake.column, reason: mistake.reason });
  });
});

describe('findJsonFault', () => {
  it('finds nothing in valid JSON of every kind', () => {
    const valid = [
      '{}',
      '[]',
      ' \t\r\n{"a": [1, -0, 0.5, -1.5e+3, 2E-2, 10], "b": {"c": null, "d": true, "e": false}, "f": "\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9😀"} \n',
      '"just a string"',
      '-12.5e3',
      'null',
      '[[[[]]], {}, [{}]]',
    ];
    for (const text of valid) {
      expect(parses(text)).toBe(true);
      expect(findJsonFault(text)).toBeNull();
    }
  });

  it.each([
    ['', 0, 'Expected a value, found the end of the input'],
    ['{"a": 01}', 6, "Expected a number without leading zeros, found '01'"],
    ['{"a": 1.}', 8, "Expected a digit after the decimal point, found '}'"],
    ['{"a": 1e+}', 9, "Expected a digit in the exponent, found '}'"],
    ['{"a": -Infinity}', 7, "Expected a digit after '-', found 'Infinity'; JSON has no NaN or Infinity"],
    ['{"a": .5}', 6, "Expected a value, found '.5'"],
    ['[1, 2,]', 6, "Expected a value after ',', found ']'; JSON allows no trailing comma"],
    ['{"a": 1]', 7, "Expected ',' or '}' after the property value, found ']'"],
    ['[1 2]', 3, "Expected ',' or ']' after the array element, found '2'"],
    ['{"a": True}', 6, "Expected a value, found 'True'; JSON's literals are true, false and null"],
    ['[truex]', 1, "Expected a value or ']', found 'truex'"],
    ['// note\n{}', 0, "Expected a value, found '/'; JSON has no comments"],
    ['{"a":\u00a01}', 5, 'Expected a value, found U+00A0'],
    ['{"a": "\\x"}', 7, "Invalid escape '\\x' in a string; the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"],
    ['{"a": "\\u12G4"}', 7, "Invalid escape '\\u12G4' in a string; \\u takes four hex digits"],
    ['{"a": "x\ty"}', 8, 'A control character (U+0009) must be escaped in a string; write it as \\t'],
    ['{"a": "x\u0001"}', 8, 'A control character (U+0001) must be escaped in a string; write it as \\u0001'],
    ['"abc\\', 0, 'Unterminated string: no closing quote before the end of the input'],
    [`{"${'k'.repeat(40)}" 1}`, 44, "Expected ':' after the property name, found '1'"],
    [`[${'x'.repeat(40)}]`, 1, `Expected a value or ']', found '${'x'.repeat(24)}…'`],
  ])('%j: offset %i, %s', (text, offset, reason) => {
    expect(parses(text)).toBe(false);
    expect(findJsonFault(text)).toEqual({ offset, reason });
  });

  it('keeps a nesting far deeper than the call stack allows without recursing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(199_999);
    expect(findJsonFault(deep)).toEqual({ offset: 399_999, reason: "Expected ',' or ']' after the array element, found the end of the input" });
    expect(findJsonFault('['.repeat(200_000) + ']'.repeat(200_000))).toBeNull();
  });

  it('agrees with JSON.parse on which texts are valid, over mutations of valid JSON', () => {
    const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 2 }), insert: fc.constantFrom('', ',', '}', ']', '{', '[', '"', "'", ':', '\\', '0', '-', '.', 'e', 'x', ' ', '\n', '\t', 'NaN', 'tru') });
    fc.assert(
      fc.property(fc.json(), fc.array(edit, { maxLength: 3 }), (json, edits) => {
        let text = json;
        for (const { at, remove, insert } of edits) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + remove);
        }
        expect(findJsonFault(text) === null).toBe(parses(text));
      }),
      { seed: 36, numRuns: 5000 },
    );
  });

  it('agrees with JSON.parse on which texts are valid, over texts made of JSON fragments', () => {
    const fragment = fc.constantFrom('{', '}', '[', ']', ',', ':', '"a"', '"', '0', '1', '-', '.', 'e', 'E', '+', 'true', 'null', ' ', '\\', 'u', '00e9', '\\n', '\\/', '\\"', '/', 'x', "'", '\n', '\t');
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 12 }), (fragments) => {
        const text = fragments.join('');
        expect(findJsonFault(text) === null).toBe(parses(text));
      }),
      { seed: 36, numRuns: 20_000 },
    );
  });
});

describe('the place in characters', () => {
  it('counts an emoji as one column and one position, as editors and FastAPI do', () => {
    expect(jsonErrorPlace('{"a": "😀😀",\n "b": 😀}')).toEqual({ index: 18, line: 2, column: 7, reason: "Expected a value, found '😀'" });
  });

  it('formats the place for a message, and has none for valid JSON', () => {
    expect(placeAndReason(jsonErrorPlace('{"a" 1}')!)).toBe("line 1, column 6: Expected ':' after the property name, found '1'");
    expect(jsonErrorPlace('{"a": 1}')).toBeNull();
  });

  it('stripByteOrderMark drops only a leading mark', () => {
    expect(stripByteOrderMark('\ufeff{}')).toBe('{}');
    expect(stripByteOrderMark('{"a": "\ufeff"}')).toBe('{"a": "\ufeff"}');
  });
});

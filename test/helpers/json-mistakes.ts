/**
 * The ten commonest ways a hand-written JSON body goes wrong, each with where it stops
 * being JSON (1-based line and column, and the character index FastAPI's `loc` carries)
 * and Sluice's reason. Shared by the scanner's unit tests and the routes' tests, so every
 * answer is checked against the same places.
 */
export interface JsonMistake {
  name: string;
  text: string;
  index: number;
  line: number;
  column: number;
  reason: string;
}

export const JSON_MISTAKES: readonly JsonMistake[] = [
  {
    name: 'a trailing comma',
    text: '{"model": "x",\n "messages": [],\n}',
    index: 32,
    line: 3,
    column: 1,
    reason: "Expected a property name in double quotes after ',', found '}'; JSON allows no trailing comma",
  },
  { name: 'a wrong closing bracket', text: '{"model": "x",\n "messages": [}', index: 29, line: 2, column: 15, reason: "Expected a value or ']', found '}'" },
  {
    name: 'single quotes',
    text: "{'model': 'x'}",
    index: 1,
    line: 1,
    column: 2,
    reason: "Expected a property name in double quotes or '}', found a single quote; JSON strings take double quotes",
  },
  {
    name: 'an unquoted key',
    text: '{"model": "x", messages: []}',
    index: 15,
    line: 1,
    column: 16,
    reason: "Expected a property name in double quotes after ',', found 'messages'",
  },
  { name: 'a bare word', text: '{"model": gpt-4o-mini}', index: 10, line: 1, column: 11, reason: "Expected a value, found 'gpt-4o-mini'" },
  {
    name: 'an unclosed string',
    text: '{"model": "x,\n "messages": []}',
    index: 10,
    line: 1,
    column: 11,
    reason: 'Unterminated string: no closing quote before the end of the line',
  },
  {
    name: 'a truncated body',
    text: '{"model": "x", "messages": [{"role": "user", "content": "hi"',
    index: 60,
    line: 1,
    column: 61,
    reason: "Expected ',' or '}' after the property value, found the end of the input",
  },
  { name: 'a missing colon', text: '{"model" "x"}', index: 9, line: 1, column: 10, reason: "Expected ':' after the property name, found a string" },
  {
    name: 'NaN',
    text: '{"model": "x", "temperature": NaN}',
    index: 30,
    line: 1,
    column: 31,
    reason: "Expected a value, found 'NaN'; JSON has no NaN or Infinity",
  },
  {
    name: 'text after the closing brace',
    text: '{"model": "x", "messages": []}\n{"model": "y"}',
    index: 31,
    line: 2,
    column: 1,
    reason: "Expected the end of the input after the JSON value, found '{'",
  },
];

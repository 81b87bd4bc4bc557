/**
 * Where a JSON text stops parsing, as a person finds it in an editor: 1-based line and
 * column, counted in characters (an emoji is one column, as editors show it), with the
 * reason in Sluice's own words (json-syntax.ts). Nothing here reads the parser's message,
 * so the answer is the same on every Node version.
 */
import { findJsonFault } from './json-syntax.js';

export interface JsonErrorPlace {
  /** Characters before the fault: FastAPI's `loc` position, which counts characters too. */
  index: number;
  line: number;
  column: number;
  reason: string;
}

const charactersIn = (text: string): number => {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A surrogate pair is one character; its second half is not counted again.
    if (c < 0xdc00 || c > 0xdfff || i === 0 || text.charCodeAt(i - 1) < 0xd800 || text.charCodeAt(i - 1) > 0xdbff) count++;
  }
  return count;
};

/** The place and reason of `text`'s first syntax fault, or null when `text` is valid JSON. */
export function jsonErrorPlace(text: string): JsonErrorPlace | null {
  const fault = findJsonFault(text);
  if (!fault) return null;
  const before = text.slice(0, fault.offset);
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  const column = charactersIn(before.slice(before.lastIndexOf('\n') + 1)) + 1;
  return { index: charactersIn(before), line, column, reason: fault.reason };
}

/** "line 2, column 3: <reason>", the place and reason of a fault for a message. */
export const placeAndReason = ({ line, column, reason }: JsonErrorPlace): string => `line ${line}, column ${column}: ${reason}`;

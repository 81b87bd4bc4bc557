/**
 * Where a JSON text stops parsing, as a person finds it in an editor: 1-based line and
 * column, from the character offset V8 puts in its SyntaxError ("… in JSON at position
 * 13"); an input that ends too early stops at its end. A refusal that is not about
 * syntax (secure-json-parse's forbidden `__proto__` key) has no place.
 */
export interface JsonErrorPlace {
  /** null when the error names no place in the text. */
  line: number | null;
  column: number | null;
  /** V8's reason without the offset, e.g. "Expected ',' or '}' after property value". */
  reason: string;
}

export function jsonErrorPlace(text: string, error: unknown): JsonErrorPlace {
  const message = error instanceof Error ? error.message : String(error);
  const at = /^(.*?)(?: in JSON)? at position (\d+)/s.exec(message);
  const atEnd = /^Unexpected end of JSON input/.test(message);
  if (!at && !atEnd) return { line: null, column: null, reason: message };
  const offset = Math.min(at ? Number(at[2]) : text.length, text.length);
  const before = text.slice(0, offset);
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1, reason: (at ? at[1]! : message).trim() };
}

/** "Invalid JSON body at line 2, column 3: <reason>", or without the place when there is none. */
export function describeJsonError(what: string, text: string, error: unknown): string {
  const { line, column, reason } = jsonErrorPlace(text, error);
  return line === null ? `${what}: ${reason}` : `${what} at line ${line}, column ${column}: ${reason}`;
}

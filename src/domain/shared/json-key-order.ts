/**
 * The order in which a JSON text lists the keys of one nested object, read from the text.
 *
 * A parsed object cannot tell it: JavaScript orders integer-like keys ("2", "10") first
 * and numerically, whatever the text said, so `{"10": …, "2": …}` comes back as 2, 10.
 * The decision route answers its questions in request order, names included that look
 * like numbers; this scan recovers that order. It runs only on text that JSON.parse has
 * already accepted, so it does not validate; one pass, no recursion.
 */

const WHITESPACE = /[ \t\n\r]/;

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && WHITESPACE.test(text[i]!)) i++;
  return i;
}

/** Index just past the string that starts at `i` (an opening quote). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** Index just past the value that starts at `i`. */
function valueEnd(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return stringEnd(text, i);
  if (first !== '{' && first !== '[') {
    while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
    return i;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') j = stringEnd(text, j) - 1;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return j + 1;
  }
  return text.length;
}

/**
 * Walks the members of the object starting at `i`, calling `member` with each key and the
 * index of its value; `member` returns the index just past that value. Returns the index
 * just past the object.
 */
function eachMember(text: string, i: number, member: (key: string, at: number) => number): number {
  i = skipWhitespace(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const at = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    i = skipWhitespace(text, member(key, at));
    if (text[i] === ',') i = skipWhitespace(text, i + 1);
  }
  return i + 1;
}

/**
 * The keys of the object reached from the top-level object by the member names of
 * `path`, in the order the text lists them (a repeated key where it first appeared, as
 * JSON.parse keeps it), or null when the text is not an object or something on the path
 * is absent or not an object. A repeated member on the path is read from its last
 * occurrence, the one JSON.parse keeps.
 */
export function keyOrderAt(text: string, path: readonly string[]): string[] | null {
  let at = skipWhitespace(text, 0);
  for (const name of path) {
    if (text[at] !== '{') return null;
    let found = -1;
    eachMember(text, at, (key, valueAt) => {
      if (key === name) found = valueAt;
      return valueEnd(text, valueAt);
    });
    if (found === -1) return null;
    at = found;
  }
  if (text[at] !== '{') return null;
  const seen = new Set<string>();
  eachMember(text, at, (key, valueAt) => {
    seen.add(key);
    return valueEnd(text, valueAt);
  });
  return [...seen];
}

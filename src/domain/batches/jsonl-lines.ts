/**
 * Splits a byte stream into JSONL lines while holding at most one line in memory.
 *
 * Lines wholly inside a chunk are yielded as views of that chunk (no copy); only a line
 * that spans chunks is gathered into its own buffer, and gathering stops once the line
 * is known to be over `maxLineBytes`, so an oversize line costs no more memory than the
 * limit. A yielded `bytes` view is valid until the consumer asks for the next line.
 */

export interface JsonlLine {
  /** Physical 1-based line number, blank lines included. */
  no: number;
  /** Content without the trailing `\n` (and `\r`); empty when `oversize`. */
  bytes: Buffer;
  /** Byte offset of the line's first byte in the whole input. */
  start: number;
  /** Byte offset just past the line's newline (or the end of input). */
  end: number;
  /** Content is longer than maxLineBytes; `bytes` is then not the line. */
  oversize: boolean;
  /** Only whitespace. */
  blank: boolean;
}

export interface SplitOptions {
  maxLineBytes: number;
  /** Number of the first line, when the stream starts mid-file. */
  firstLineNo?: number;
  /** Offset of the stream's first byte in the whole input. */
  startOffset?: number;
}

const NEWLINE = 10;
const CR = 13;
const EMPTY = Buffer.alloc(0);

function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 32 && b !== 9 && b !== CR) return false;
  }
  return true;
}

function contentOf(raw: Buffer): Buffer {
  return raw.length > 0 && raw[raw.length - 1] === CR ? raw.subarray(0, raw.length - 1) : raw;
}

export async function* splitJsonlLines(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: SplitOptions,
): AsyncGenerator<JsonlLine> {
  const max = options.maxLineBytes;
  let no = options.firstLineNo ?? 1;
  let offset = options.startOffset ?? 0; // offset of the next unread byte
  let lineStart = offset;
  // A line carried over from earlier chunks: its pieces, gathered only up to max + 1 bytes.
  let carried: Buffer[] = [];
  let carriedBytes = 0; // the line's length so far, including pieces not kept
  let carriedKept = 0;

  const finish = (raw: Buffer, rawLength: number, end: number): JsonlLine => {
    // rawLength counts a trailing \r that `raw` may show; an oversize line keeps no bytes.
    const oversize = rawLength > max + 1 || (rawLength === max + 1 && raw[raw.length - 1] !== CR);
    const bytes = oversize ? EMPTY : contentOf(raw);
    const line = { no, bytes, start: lineStart, end, oversize, blank: !oversize && isBlank(bytes) };
    no += 1;
    lineStart = end;
    return line;
  };

  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : Buffer.isBuffer(piece) ? piece : Buffer.from(piece);
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, pos);
      const stop = nl === -1 ? chunk.length : nl;
      if (nl === -1 || carriedBytes > 0) {
        // Gather (bounded) into the carried line.
        const room = Math.max(0, max + 1 - carriedKept);
        const take = Math.min(room, stop - pos);
        if (take > 0) {
          carried.push(Buffer.from(chunk.subarray(pos, pos + take)));
          carriedKept += take;
        }
        carriedBytes += stop - pos;
      }
      if (nl === -1) break;
      const end = offset + nl + 1;
      if (carriedBytes > 0) {
        const raw = carried.length === 1 ? carried[0]! : Buffer.concat(carried, carriedKept);
        yield finish(raw, carriedBytes, end);
        carried = [];
        carriedBytes = 0;
        carriedKept = 0;
      } else {
        yield finish(chunk.subarray(pos, nl), nl - pos, end);
      }
      pos = nl + 1;
    }
    offset += chunk.length;
  }
  if (carriedBytes > 0) {
    const raw = carried.length === 1 ? carried[0]! : Buffer.concat(carried, carriedKept);
    yield finish(raw, carriedBytes, offset);
  }
}

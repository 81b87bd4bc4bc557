/**
 * Object reads that survive a connection dropped mid-body. The AWS SDK retries a request
 * that fails before its response arrives, but once GetObject has answered, its body is a
 * plain socket stream: a reset there would fail a long download or a batch shard read
 * outright. This asks again for the rest, with a Range from the byte already delivered,
 * after a backoff, up to a bounded number of failures in a row (a part that delivers
 * bytes resets the count). Every resumed part must carry the first answer's ETag (and asks
 * for it with If-Match), so a blob overwritten meanwhile fails the read instead of being
 * spliced from two versions.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ObjectPart {
  body: AsyncIterable<Uint8Array>;
  /** Bytes this answer's body holds (its Content-Length), when known. */
  length: number | undefined;
  etag: string | undefined;
}

/** Fetches bytes [start, end] (end inclusive, open when undefined), conditional on `etag` when given. */
export type FetchPart = (start: number, end: number | undefined, etag: string | undefined) => Promise<ObjectPart>;

export interface ResumePolicy {
  /** Failed parts in a row before the read fails. */
  maxResumes: number;
  /** The first wait; it doubles with each failure in a row (with jitter). */
  baseDelayMs: number;
}

export class ObjectChangedError extends Error {
  constructor() {
    super('the object changed while it was being read');
    this.name = 'ObjectChangedError';
  }
}

class TruncatedBodyError extends Error {
  constructor(delivered: number, expected: number) {
    super(`the object body ended after ${delivered} of ${expected} bytes`);
    this.name = 'TruncatedBodyError';
  }
}

/**
 * Reads [range.start, range.end] as one stream. The first request's failure (missing
 * object, storage error) rejects; later failures, once resumes are exhausted, error the
 * stream.
 */
export async function resumableRead(fetchPart: FetchPart, range: { start: number; end?: number }, policy: ResumePolicy): Promise<Readable> {
  const first = await fetchPart(range.start, range.end, undefined);
  return Readable.from(parts(first, fetchPart, range, policy), { objectMode: false });
}

async function* parts(first: ObjectPart, fetchPart: FetchPart, range: { start: number; end?: number }, policy: ResumePolicy): AsyncGenerator<Uint8Array> {
  const expectedEnd = first.length === undefined ? undefined : range.start + first.length;
  let part = first;
  let offset = range.start;
  let failures = 0;
  for (;;) {
    const partStart = offset;
    try {
      for await (const chunk of part.body) {
        offset += chunk.length;
        yield chunk;
      }
      if (expectedEnd === undefined || offset >= expectedEnd) return;
      throw new TruncatedBodyError(offset - range.start, expectedEnd - range.start);
    } catch (err) {
      if (expectedEnd !== undefined && offset >= expectedEnd) return;
      failures = offset > partStart ? 1 : failures + 1;
      if (failures > policy.maxResumes) throw err;
    }
    await sleep(policy.baseDelayMs * 2 ** (failures - 1) * (0.5 + Math.random() / 2));
    part = await fetchPart(offset, range.end, first.etag);
    if (first.etag !== undefined && part.etag !== first.etag) {
      (part.body as Partial<Readable>).destroy?.();
      throw new ObjectChangedError();
    }
  }
}

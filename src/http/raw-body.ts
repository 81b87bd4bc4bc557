/**
 * Reads a request's whole body before any parser sees it, for strategies that verify the
 * exact bytes (a signature over the body), and puts the bytes back so that whatever reads
 * the body next (Fastify's content-type parsers, the multipart reader, which reads the
 * request stream itself) reads the same bytes as if nothing had happened.
 *
 * Written here because the raw-body plugins capture at parse time (a content-type parser
 * that keeps the bytes), which is after the body has been parsed and, for multipart, never;
 * this must run before either, in preParsing. The bytes go back with `unshift` while the
 * stream has not yet emitted 'end': Node emits 'end' only once its buffer has been read
 * empty, so a reader that starts later still receives every byte, then 'end'.
 */
import type { IncomingMessage } from 'node:http';
import { AppError } from '../domain/shared/errors.js';

export const tooLarge = () => new AppError('payload_too_large', 'Request body is too large', { code: 'request_too_large' });

/** The request has a body to read (a length above zero, or chunked). */
export const hasBody = (raw: IncomingMessage): boolean =>
  raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;

/**
 * The body's bytes, at most `limitBytes` of them (beyond that it rejects with 413 and
 * stops reading); the stream is left holding the same bytes, unread.
 */
export function captureBody(raw: IncomingMessage, limitBytes: number): Promise<Buffer> {
  if (!hasBody(raw)) return Promise.resolve(Buffer.alloc(0));
  const declared = raw.headers['transfer-encoding'] === undefined ? Number(raw.headers['content-length'] ?? 0) : -1;
  if (declared > limitBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (error: Error | null) => {
      raw.off('readable', onReadable);
      raw.off('error', onError);
      raw.off('close', onClose);
      if (error) return reject(error);
      const bytes = Buffer.concat(chunks, total);
      if (total > 0) raw.unshift(bytes);
      resolve(bytes);
    };
    const onReadable = () => {
      for (let chunk: Buffer | null; (chunk = raw.read() as Buffer | null) !== null; ) {
        total += chunk.length;
        if (total > limitBytes) return finish(tooLarge());
        chunks.push(chunk);
      }
      // A declared length fully read is the whole body: no need to wait for the stream's next turn.
      if (raw.complete || total === declared) finish(null);
    };
    const onError = (err: Error) => finish(err);
    const onClose = () => {
      if (!raw.complete) finish(new AppError('invalid_request', 'The client closed the connection before the body arrived', { code: 'client_closed' }));
    };
    raw.on('readable', onReadable);
    raw.on('error', onError);
    raw.on('close', onClose);
  });
}

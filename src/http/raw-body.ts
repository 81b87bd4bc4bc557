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

/** Receives the captured bytes, or why there are none. */
export type BodyCallback = (error: Error | null, bytes?: Buffer) => void;

/**
 * Reads the body's bytes, at most `limitBytes` of them (beyond that it answers 413 and
 * stops reading), and leaves the stream holding the same bytes, unread. Callback-style:
 * it runs on every request of a raw-body scope, where a promise would cost a hop.
 */
export function captureBody(raw: IncomingMessage, limitBytes: number, callback: BodyCallback): void {
  if (!hasBody(raw)) return callback(null, Buffer.alloc(0));
  const declared = raw.headers['transfer-encoding'] === undefined ? Number(raw.headers['content-length'] ?? 0) : -1;
  if (declared > limitBytes) return callback(tooLarge());
  new BodyCapture(raw, limitBytes, declared, callback).start();
}

/** One body being read; its listeners are methods bound once, not closures made per request. */
class BodyCapture {
  readonly #chunks: Buffer[] = [];
  #total = 0;
  readonly #onReadable = this.#readable.bind(this);
  readonly #onError = this.#finish.bind(this);
  readonly #onClose = this.#closed.bind(this);

  constructor(
    private readonly raw: IncomingMessage,
    private readonly limitBytes: number,
    /** content-length, or -1 when chunked. */
    private readonly declared: number,
    private readonly callback: BodyCallback,
  ) {}

  start(): void {
    this.raw.on('readable', this.#onReadable);
    this.raw.on('error', this.#onError);
    this.raw.on('close', this.#onClose);
  }

  #readable(): void {
    const { raw } = this;
    for (let chunk: Buffer | null; (chunk = raw.read() as Buffer | null) !== null; ) {
      this.#total += chunk.length;
      if (this.#total > this.limitBytes) return this.#finish(tooLarge());
      this.#chunks.push(chunk);
    }
    // A declared length fully read is the whole body: no need to wait for the stream's next turn.
    if (raw.complete || this.#total === this.declared) this.#finish(null);
  }

  #closed(): void {
    if (!this.raw.complete) this.#finish(new AppError('invalid_request', 'The client closed the connection before the body arrived', { code: 'client_closed' }));
  }

  #finish(error: Error | null): void {
    const { raw } = this;
    raw.off('readable', this.#onReadable);
    raw.off('error', this.#onError);
    raw.off('close', this.#onClose);
    if (error) return this.callback(error);
    const bytes = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#total);
    if (this.#total > 0) raw.unshift(bytes);
    this.callback(null, bytes);
  }
}

/** A BlobStore decorator giving each read, write, stat and delete a span (a read's span lasts until its stream ends). */
import type { Readable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import type { BlobStore, PutOptions, StoredBlob } from '../domain/files/blob-store.port.js';
import { failSpan, inSpan, tracer } from './tracing.js';

export class TracingBlobStore implements BlobStore {
  constructor(
    private readonly inner: BlobStore,
    private readonly backend: string,
  ) {}

  put(key: string, body: Readable | AsyncIterable<Uint8Array | string>, options?: PutOptions): Promise<StoredBlob> {
    return inSpan('blob.put', { 'blob.key': key, 'blob.backend': this.backend }, async (span) => {
      const stored = await this.inner.put(key, body, options);
      span.setAttribute('blob.bytes', stored.bytes);
      return stored;
    });
  }

  async get(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const span = tracer().startSpan('blob.get', {
      attributes: { 'blob.key': key, 'blob.backend': this.backend, ...(range ? { 'blob.range_start': range.start } : {}) },
    });
    try {
      const stream = await context.with(trace.setSpan(context.active(), span), () => this.inner.get(key, range));
      stream.once('close', () => span.end());
      return stream;
    } catch (err) {
      failSpan(span, err);
      span.end();
      throw err;
    }
  }

  stat(key: string): Promise<{ bytes: number } | null> {
    return inSpan('blob.stat', { 'blob.key': key, 'blob.backend': this.backend }, () => this.inner.stat(key));
  }

  delete(key: string): Promise<void> {
    return inSpan('blob.delete', { 'blob.key': key, 'blob.backend': this.backend }, () => this.inner.delete(key));
  }

  check(): Promise<void> {
    return this.inner.check?.() ?? Promise.resolve();
  }

  close(): void | Promise<void> {
    return this.inner.close?.();
  }
}

/**
 * The blob storage port. Blobs are written as streams and read as streams, so no
 * file ever has to sit in memory; implementations must never leave a partial blob
 * visible under its key (write elsewhere, then publish atomically).
 */
import type { Readable } from 'node:stream';

export interface StoredBlob {
  key: string;
  bytes: number;
  sha256: string;
}

export interface PutOptions {
  /** Abort the write (and discard what was written) once more than this many bytes arrive. */
  maxBytes?: number;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

export interface BlobStore {
  put(key: string, body: Readable | AsyncIterable<Uint8Array | string>, options?: PutOptions): Promise<StoredBlob>;
  /** Throws BlobNotFoundError when absent. */
  get(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  stat(key: string): Promise<{ bytes: number } | null>;
  /** Deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** Readiness probe: throws while the storage cannot be reached or used. */
  check?(): Promise<void>;
  /** Releases connections; the store is not used afterwards. */
  close?(): void | Promise<void>;
}

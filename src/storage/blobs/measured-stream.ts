/**
 * The pass-through every blob store writes through: counts and hashes the bytes on their
 * way, and fails with BlobTooLargeError once more than `maxBytes` arrive (so a piped
 * source stops being read at once).
 */
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { BlobTooLargeError } from '../../domain/files/blob-store.port.js';

export interface MeasuredStream {
  stream: Transform;
  /** What passed through so far: its size and SHA-256 (read once the write has ended). */
  measured(): { bytes: number; sha256: string };
}

export function measuredStream(maxBytes: number | undefined): MeasuredStream {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      if (maxBytes !== undefined && bytes > maxBytes) {
        callback(new BlobTooLargeError(maxBytes));
        return;
      }
      hash.update(buffer);
      callback(null, buffer);
    },
  });
  return { stream, measured: () => ({ bytes, sha256: hash.digest('hex') }) };
}

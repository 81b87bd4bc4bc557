/**
 * Blob storage on local disk. Writes go to a temporary file in the same directory,
 * are fsynced, then renamed into place, so a reader sees either nothing or the whole blob.
 */
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore, type PutOptions, type StoredBlob } from '../../domain/files/blob-store.port.js';
import { measuredStream } from './measured-stream.js';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export class LocalDiskBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  #pathOf(key: string): string {
    if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.' || part === '')) {
      throw new Error(`invalid blob key: ${key}`);
    }
    return path.join(this.root, key);
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array | string>, options: PutOptions = {}): Promise<StoredBlob> {
    const finalPath = this.#pathOf(key);
    await mkdir(path.dirname(finalPath), { recursive: true });
    const tempPath = `${finalPath}.tmp-${randomBytes(6).toString('hex')}`;
    const meter = measuredStream(options.maxBytes);
    try {
      const out = createWriteStream(tempPath, { flags: 'wx' });
      await pipeline(body, meter.stream, out);
      await this.#fsync(tempPath);
      await rename(tempPath, finalPath);
    } catch (err) {
      await rm(tempPath, { force: true });
      throw err;
    }
    return { key, ...meter.measured() };
  }

  async get(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const file = this.#pathOf(key);
    const info = await this.stat(key);
    if (!info) throw new BlobNotFoundError(key);
    return createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<{ bytes: number } | null> {
    try {
      const info = await stat(this.#pathOf(key));
      return info.isFile() ? { bytes: info.size } : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.#pathOf(key), { force: true });
  }

  /** Readiness: the root exists (or can be made) and is a writable directory. */
  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.W_OK);
  }

  async #fsync(file: string): Promise<void> {
    const handle = await open(file, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

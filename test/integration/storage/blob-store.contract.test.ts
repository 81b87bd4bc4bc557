/**
 * The BlobStore contract, run against every implementation: local disk, and S3 through the
 * AWS SDK against s3rver on loopback. Whatever the backend, a blob is all-or-nothing, reads
 * may be ranged, a size limit stops the write at once, and deletes are idempotent.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from '../../../src/domain/files/blob-store.port.js';
import { LocalDiskBlobStore } from '../../../src/storage/blobs/local-disk.js';
import { S3BlobStore } from '../../../src/storage/blobs/s3.js';
import { createBlobStore } from '../../../src/storage/blobs/create-blob-store.js';
import { tempDir } from '../../helpers/databases.js';
import { startFakeS3, type FakeS3 } from '../../helpers/s3-server.js';

interface Backend {
  name: string;
  setUp(): Promise<{ store: BlobStore; pendingParts(): Promise<string[]>; tearDown(): Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: 'local disk',
    setUp: async () => ({ store: new LocalDiskBlobStore(tempDir()), pendingParts: async () => [], tearDown: async () => {} }),
  },
  {
    name: 's3 (s3rver)',
    setUp: async () => {
      const s3 = await startFakeS3();
      const store = createBlobStore(s3.config('tenant-blobs'));
      return {
        store,
        pendingParts: () => s3.pendingUploads(),
        tearDown: async () => {
          await store.close?.();
          await s3.close();
        },
      };
    },
  },
];

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** `total` bytes in `chunkBytes` chunks, made only when pulled; `pulled()` says how many were. */
function lazySource(total: number, chunkBytes: number, failAt?: number) {
  let pulled = 0;
  async function* generate() {
    while (pulled < total) {
      if (failAt !== undefined && pulled >= failAt) throw new Error('client went away');
      const size = Math.min(chunkBytes, total - pulled);
      const chunk = Buffer.alloc(size, 97 + ((pulled / chunkBytes) % 26));
      pulled += size;
      yield chunk;
    }
  }
  return { stream: Readable.from(generate(), { objectMode: false, highWaterMark: chunkBytes }), pulled: () => pulled };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const MB = 1024 * 1024;

describe.each(BACKENDS)('BlobStore contract: $name', (backend) => {
  let store: BlobStore;
  let pendingParts: () => Promise<string[]>;
  let tearDown: () => Promise<void>;
  beforeAll(async () => {
    ({ store, pendingParts, tearDown } = await backend.setUp());
  });
  afterAll(() => tearDown());

  it('stores a stream and reads it back whole, with its size and SHA-256', async () => {
    const content = Buffer.from('{"a":1}\n{"b":2}\n');
    const stored = await store.put('files/one.jsonl', Readable.from([content.subarray(0, 5), content.subarray(5)]));
    expect(stored).toEqual({ key: 'files/one.jsonl', bytes: content.length, sha256: sha256(content) });
    expect(await readAll(await store.get('files/one.jsonl'))).toEqual(content);
    expect(await store.stat('files/one.jsonl')).toEqual({ bytes: content.length });
  });

  it('accepts string chunks from an async iterable and overwrites an existing key', async () => {
    await store.put('files/over.jsonl', Readable.from(['first version\n']));
    async function* lines() {
      yield 'second ';
      yield 'version\n';
    }
    const stored = await store.put('files/over.jsonl', lines());
    expect(stored.bytes).toBe(15);
    expect((await readAll(await store.get('files/over.jsonl'))).toString()).toBe('second version\n');
  });

  it('stores an empty blob', async () => {
    const stored = await store.put('files/empty.jsonl', Readable.from([]));
    expect(stored).toMatchObject({ bytes: 0, sha256: sha256(Buffer.alloc(0)) });
    expect(await store.stat('files/empty.jsonl')).toEqual({ bytes: 0 });
  });

  it('reads byte ranges (end inclusive, open end, start past the end)', async () => {
    await store.put('files/range.txt', Readable.from([Buffer.from('0123456789')]));
    expect((await readAll(await store.get('files/range.txt', { start: 2, end: 5 }))).toString()).toBe('2345');
    expect((await readAll(await store.get('files/range.txt', { start: 7 }))).toString()).toBe('789');
    // (not {0, 0}: s3rver reads an end of 0 as "to the end"; S3 itself answers one byte)
    expect((await readAll(await store.get('files/range.txt', { start: 3, end: 3 }))).toString()).toBe('3');
    expect((await readAll(await store.get('files/range.txt', { start: 10 }))).toString()).toBe('');
  });

  it('streams a multi-part blob (over 5 MB parts) intact, and ranged reads cross part boundaries', async () => {
    const source = lazySource(11 * MB + 123, 256 * 1024);
    const stored = await store.put('files/big.bin', source.stream, { maxBytes: 100 * MB });
    const whole = await readAll(await store.get('files/big.bin'));
    expect(whole.length).toBe(11 * MB + 123);
    expect(stored).toMatchObject({ bytes: 11 * MB + 123, sha256: sha256(whole) });
    const across = await readAll(await store.get('files/big.bin', { start: 5 * MB - 10, end: 5 * MB + 9 }));
    expect(across).toEqual(whole.subarray(5 * MB - 10, 5 * MB + 10));
    expect(await pendingParts()).toEqual([]);
  }, 60_000);

  it('missing blobs: get throws BlobNotFoundError, stat answers null, delete is a no-op', async () => {
    await expect(store.get('files/never.jsonl')).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store.get('files/never.jsonl', { start: 0, end: 3 })).rejects.toBeInstanceOf(BlobNotFoundError);
    expect(await store.stat('files/never.jsonl')).toBeNull();
    await expect(store.delete('files/never.jsonl')).resolves.toBeUndefined();
  });

  it('deletes a blob', async () => {
    await store.put('files/gone.jsonl', Readable.from(['x']));
    await store.delete('files/gone.jsonl');
    expect(await store.stat('files/gone.jsonl')).toBeNull();
    await expect(store.get('files/gone.jsonl')).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('maxBytes: fails with BlobTooLargeError, stops reading the source, leaves no blob and no parts', async () => {
    const source = lazySource(64 * MB, 256 * 1024);
    const failure = await store.put('files/too-big.bin', source.stream, { maxBytes: 12 * MB }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(BlobTooLargeError);
    expect((failure as BlobTooLargeError).maxBytes).toBe(12 * MB);
    // Stream buffers allow a few chunks past the limit, never the rest of the 64 MB.
    expect(source.pulled()).toBeLessThan(16 * MB);
    expect(await store.stat('files/too-big.bin')).toBeNull();
    expect(await pendingParts()).toEqual([]);
  }, 60_000);

  it('an existing blob survives a failed overwrite untouched', async () => {
    await store.put('files/keep.jsonl', Readable.from(['original\n']));
    const source = lazySource(8 * MB, 256 * 1024, 6 * MB);
    await expect(store.put('files/keep.jsonl', source.stream)).rejects.toThrow('client went away');
    expect((await readAll(await store.get('files/keep.jsonl'))).toString()).toBe('original\n');
    expect(await pendingParts()).toEqual([]);
  }, 60_000);

  it('rejects keys that could escape the store', async () => {
    for (const key of ['../etc/passwd', 'a/../../b', '/abs', 'a//b', '']) {
      await expect(store.put(key, Readable.from(['x']))).rejects.toThrow('invalid blob key');
    }
  });

  it('check() passes while the storage is usable', async () => {
    await expect(store.check!()).resolves.toBeUndefined();
  });
});

describe('S3 blob store failures', () => {
  let s3: FakeS3;
  beforeAll(async () => {
    s3 = await startFakeS3();
  });
  afterAll(() => s3.close());

  it('a missing bucket is a storage failure, not a missing blob', async () => {
    const store = new S3BlobStore({ ...s3.config(), bucket: 'no-such-bucket' });
    const failure = await store.get('files/a.jsonl').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(BlobNotFoundError);
    await expect(store.check()).rejects.toThrow();
    store.close();
  });

  it('an unreachable endpoint fails every operation (after the SDK retries) and fails check()', async () => {
    const store = new S3BlobStore({ ...s3.config(), endpoint: 'http://127.0.0.1:9' });
    await expect(store.put('files/a.jsonl', Readable.from(['x']))).rejects.toThrow();
    const failure = await store.get('files/a.jsonl').catch((err: unknown) => err);
    expect(failure).not.toBeInstanceOf(BlobNotFoundError);
    await expect(store.stat('files/a.jsonl')).rejects.toThrow();
    await expect(store.check()).rejects.toThrow();
    store.close();
  }, 30_000);

  it('keys live under the configured prefix', async () => {
    const store = new S3BlobStore(s3.config('team-a/blobs'));
    const other = new S3BlobStore(s3.config('team-b'));
    await store.put('files/p.jsonl', Readable.from(['x']));
    expect(await store.stat('files/p.jsonl')).toEqual({ bytes: 1 });
    expect(await other.stat('files/p.jsonl')).toBeNull();
    store.close();
    other.close();
  });
});

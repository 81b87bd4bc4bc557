/**
 * The S3 blob store against the failures the SDK's own retries do not cover, injected by a
 * loopback proxy in front of s3rver (test/helpers/s3-fault-proxy.ts): an object body cut
 * mid-stream resumes with a Range from the byte delivered (If-Match on the first ETag), up
 * to a bounded number of failures in a row; an object overwritten between the cut and the
 * resume fails the read rather than splicing two versions; a multipart upload whose parts
 * keep failing is aborted, leaving no parts. Then through the HTTP API: a download and a
 * batch's shard reads survive a dropped connection.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../../src/storage/blobs/s3.js';
import { ObjectChangedError } from '../../../src/storage/blobs/resumable-read.js';
import { startFakeS3, type FakeS3 } from '../../helpers/s3-server.js';
import { startS3FaultProxy, type S3FaultProxy } from '../../helpers/s3-fault-proxy.js';
import { startTestServer } from '../../helpers/harness.js';
import { startFakeUpstream } from '../../helpers/fake-upstream.js';
import { download, isTerminal, requestLines, startBatch, upstreamYaml, uploadFile, waitForBatch, fileLines } from '../batches/support/batch-helpers.js';

const MB = 1024 * 1024;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Distinct bytes at every offset, so a resume from the wrong byte shows. */
function pattern(bytes: number, seed = 0): Buffer {
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) data.writeUInt32LE((i * 2654435761 + seed) >>> 0, i);
  return data;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let s3: FakeS3;
let proxy: S3FaultProxy;
let store: S3BlobStore;
let direct: S3BlobStore;

beforeAll(async () => {
  s3 = await startFakeS3();
  proxy = await startS3FaultProxy(s3.endpoint);
  store = new S3BlobStore({ ...s3.config(), endpoint: proxy.endpoint });
  direct = new S3BlobStore(s3.config());
});
afterAll(async () => {
  store.close();
  direct.close();
  await proxy.close();
  await s3.close();
});
afterEach(() => proxy.reset());

const objectGets = () => proxy.requests.filter((r) => r.method === 'GET' && r.path.endsWith('.bin'));

describe('S3 reads cut mid-body', () => {
  it('a whole read cut twice resumes from the byte reached each time, conditional on the first ETag, and is intact', async () => {
    const data = pattern(3 * MB);
    await direct.put('files/whole.bin', Readable.from([data]));
    proxy.reset();
    proxy.rules.cutGet = (n) => (n === 1 ? MB : n === 2 ? 512 * 1024 : null);
    const read = await readAll(await store.get('files/whole.bin'));
    expect(read.length).toBe(data.length);
    expect(sha256(read)).toBe(sha256(data));
    const gets = objectGets();
    expect(gets.map((g) => g.range)).toEqual([undefined, `bytes=${MB}-`, `bytes=${MB + 512 * 1024}-`]);
    expect(gets[0]!.ifMatch).toBeUndefined();
    expect(gets[1]!.ifMatch).toMatch(/^"[0-9a-f]+"$/);
    expect(gets[2]!.ifMatch).toBe(gets[1]!.ifMatch);
  });

  it('a ranged read resumes within its range', async () => {
    const data = pattern(2 * MB, 7);
    await direct.put('files/ranged.bin', Readable.from([data]));
    proxy.reset();
    proxy.rules.cutGet = (n) => (n === 1 ? 300_000 : null);
    const read = await readAll(await store.get('files/ranged.bin', { start: 1000, end: 1_500_999 }));
    expect(read.equals(data.subarray(1000, 1_501_000))).toBe(true);
    expect(objectGets().map((g) => g.range)).toEqual(['bytes=1000-1500999', 'bytes=301000-1500999']);
  });

  it('gives up after 4 resumes in a row that deliver nothing: the stream errors, and the part read so far was all correct', async () => {
    const data = pattern(2 * MB, 3);
    await direct.put('files/dead.bin', Readable.from([data]));
    proxy.reset();
    proxy.rules.cutGet = (n) => (n === 1 ? 100_000 : 0);
    const stream = await store.get('files/dead.bin');
    const chunks: Buffer[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(Buffer.concat(chunks).equals(data.subarray(0, 100_000))).toBe(true);
    expect(objectGets().map((g) => g.range)).toEqual([undefined, ...Array<string>(4).fill('bytes=100000-')]);
  }, 30_000);

  it('an object overwritten between the cut and the resume fails the read instead of splicing two versions', async () => {
    const before = pattern(MB, 1);
    await direct.put('files/changing.bin', Readable.from([before]));
    proxy.rules.cutGet = (n) => (n === 1 ? 200_000 : null);
    proxy.rules.beforeGet = async (n) => {
      if (n === 2) await direct.put('files/changing.bin', Readable.from([pattern(MB, 2)]));
    };
    const stream = await store.get('files/changing.bin');
    const chunks: Buffer[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ObjectChangedError);
    expect(Buffer.concat(chunks).equals(before.subarray(0, 200_000))).toBe(true);
  });
});

describe('S3 multipart uploads whose parts fail', () => {
  it('are aborted once the SDK retries run out: the put fails, no blob and no parts are left', async () => {
    proxy.rules.failUploadParts = true;
    const failure = await store.put('files/never.bin', Readable.from([pattern(12 * MB)])).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(await direct.stat('files/never.bin')).toBeNull();
    expect(await s3.pendingUploads()).toEqual([]);
    const aborts = proxy.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith('/files/never.bin'));
    expect(aborts.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('through the HTTP API on an S3 store behind a dropping connection', () => {
  it('a file download and a batch\'s shard reads survive a body cut mid-stream', async () => {
    const upstream = await startFakeUpstream();
    const server = await startTestServer({
      env: {
        BLOB_URL: `s3://${s3.bucket}/api?endpoint=${proxy.endpoint}`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      },
      yaml: upstreamYaml(upstream.baseUrl, { shard_lines: 5 }),
      startWorkers: true,
    });
    try {
      const { key } = await server.newTenant();
      const content = requestLines(20);
      const uploaded = await uploadFile(server.baseUrl, key, content);
      expect(uploaded.status).toBe(200);

      // Every object GET from now on is cut once, halfway through what it asked for.
      const cut = new Set<number>();
      let gets = 0;
      proxy.rules.cutGet = () => {
        gets += 1;
        if (gets % 2 === 1) {
          cut.add(gets);
          return 40;
        }
        return null;
      };
      const downloaded = await download(server.baseUrl, key, uploaded.body.id);
      expect(downloaded.status).toBe(200);
      expect(downloaded.text).toBe(content);

      const { batch } = await startBatch(server.baseUrl, key, content);
      const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
      expect(done).toMatchObject({ status: 'completed', request_counts: { total: 20, completed: 20, failed: 0 } });
      const output = await fileLines(server.baseUrl, key, done.output_file_id);
      expect(output.map((l) => l.custom_id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `req-${i + 1}`).sort());
      // Shard reads were among the cut ones (4 shards, each cut once and resumed).
      expect(cut.size).toBeGreaterThan(4);
    } finally {
      await server.close();
      await upstream.close();
    }
  }, 60_000);
});

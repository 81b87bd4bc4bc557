/**
 * Files and Batches on S3-compatible storage (BLOB_URL, s3rver on loopback): uploads,
 * downloads, a batch whose input shards are ranged reads and whose results are written
 * back to the bucket, the 100 MB limit aborting its multipart upload, and storage_error
 * when the bucket cannot be reached.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeS3, type FakeS3 } from '../../helpers/s3-server.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { download, isTerminal, rawUpload, requestLines, resultsOf, startBatch, upstreamYaml, uploadFile, waitForBatch } from '../batches/support/batch-helpers.js';

const BOUNDARY = '----sluice-s3-boundary';

let s3: FakeS3;
let upstream: FakeUpstream;
let server: TestServer;
let key: string;

beforeAll(async () => {
  s3 = await startFakeS3();
  upstream = await startFakeUpstream();
  server = await startTestServer({
    env: { BLOB_URL: `s3://${s3.bucket}/sluice?endpoint=${s3.endpoint}&force_path_style=true`, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    yaml: upstreamYaml(upstream.baseUrl, { shard_lines: 7 }),
    startWorkers: true,
  });
  ({ key } = await server.newTenant());
});
afterAll(async () => {
  await server.close();
  await upstream.close();
  await s3.close();
});

describe('files on S3', () => {
  it('uploads to the bucket, downloads the same bytes, and deletes the object', async () => {
    const content = requestLines(5);
    const res = await uploadFile(server.baseUrl, key, content);
    expect(res.status).toBe(200);
    expect(await server.core.blobs.stat(`files/${res.body.id}.jsonl`)).toEqual({ bytes: Buffer.byteLength(content) });
    const got = await download(server.baseUrl, key, res.body.id);
    expect(got.status).toBe(200);
    expect(got.text).toBe(content);
    const deleted = await call(server.baseUrl, 'DELETE', `/v1/files/${res.body.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(await server.core.blobs.stat(`files/${res.body.id}.jsonl`)).toBeNull();
  });

  it('runs a batch read in ranged shards from the bucket and writes its output there', async () => {
    const { batch } = await startBatch(server.baseUrl, key, requestLines(30));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
    const { output, seen } = await resultsOf(server.baseUrl, key, done);
    expect(output).toHaveLength(30);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);

  it('413 file_too_large once 100 MB is crossed: the multipart upload is aborted, no parts remain', async () => {
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`;
    const line = Buffer.from(`${JSON.stringify({ custom_id: 'x', pad: 'p'.repeat(4000) })}\n`);
    const total = 100 * 1024 * 1024 + 64 * 1024;
    const res = await rawUpload(server.baseUrl, key, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, (req) => {
      Readable.from(
        (function* () {
          yield Buffer.from(head);
          for (let sent = 0; sent < total; sent += line.length) yield line;
          yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
        })(),
      ).pipe(req);
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'file_too_large', type: 'invalid_request_error', param: 'file' });
    expect(await s3.pendingUploads()).toEqual([]);
  }, 120_000);
});

describe('S3 unreachable', () => {
  let broken: TestServer;
  beforeAll(async () => {
    broken = await startTestServer({
      env: { BLOB_URL: 's3://sluice-test?endpoint=http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' },
    });
  });
  afterAll(() => broken.close());

  it('uploads answer 500 storage_error and leave no file record; /readyz says the blob store is down', async () => {
    const tenant = await broken.newTenant();
    const res = await uploadFile(broken.baseUrl, tenant.key, requestLines(2));
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'storage_error', type: 'internal_error', message: 'Storage error; retry the request' });
    expect((await call(broken.baseUrl, 'GET', '/v1/files', { key: tenant.key })).body.data).toEqual([]);
    const ready = await call(broken.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.blob_store).toBe('unreachable (ECONNREFUSED)');
  }, 30_000);
});

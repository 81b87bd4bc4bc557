/** POST /v1/files: the happy path and every code of the spec's "Files errors" table for uploads. */
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import type { BlobStore } from '../../../src/domain/files/blob-store.port.js';
import { rawUpload, requestLines, uploadFile } from '../batches/support/batch-helpers.js';

const BOUNDARY = '----sluice-test-boundary';

interface RawPart {
  name: string;
  filename?: string;
  content: string;
}

function multipart(parts: RawPart[]): { body: Buffer; contentType: string } {
  const chunks = parts.map((p) => {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n${p.content}\r\n`;
  });
  return { body: Buffer.from(`${chunks.join('')}--${BOUNDARY}--\r\n`), contentType: `multipart/form-data; boundary=${BOUNDARY}` };
}

function postRaw(server: TestServer, key: string, body: Buffer | string, contentType?: string) {
  return call(server.baseUrl, 'POST', '/v1/files', { key, rawBody: body, headers: contentType ? { 'content-type': contentType } : {} });
}

/** Every blob file under the server's blob root (temporary files included). */
function blobFiles(server: TestServer): string[] {
  const dir = path.join(server.dataDir, 'blobs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name);
}

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant());
});
afterAll(() => server.close());

describe('POST /v1/files', () => {
  it('stores a .jsonl upload and answers the file object', async () => {
    const content = requestLines(3);
    const res = await uploadFile(server.baseUrl, key, content, { filename: 'my-input.jsonl' });
    expect(res.status).toBe(200);
    const file = res.body;
    expect(file).toMatchObject({ object: 'file', bytes: Buffer.byteLength(content), filename: 'my-input.jsonl', purpose: 'batch', status: 'processed' });
    expect(file.id).toMatch(/^file-[0-9a-z]{26}$/);
    expect(file.expires_at - file.created_at).toBe(30 * 24 * 3600);
    expect(file).not.toHaveProperty('is_error');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(blobFiles(server)).toContain(`${file.id}.jsonl`);
  });

  it('accepts purpose after the file, and names a file without filename {file_id}.jsonl', async () => {
    const after = await uploadFile(server.baseUrl, key, requestLines(1), { fileFirst: true });
    expect(after.status).toBe(200);
    const { body, contentType } = multipart([
      { name: 'purpose', content: 'batch' },
      { name: 'file', content: requestLines(1) },
    ]);
    const res = await postRaw(server, key, body, contentType);
    expect(res.status).toBe(200);
    expect(res.body.filename).toBe(`${res.body.id}.jsonl`);
  });

  it('400 invalid_content_type when the body is not multipart/form-data', async () => {
    for (const [body, type] of [
      ['{"purpose":"batch"}', 'application/json'],
      ['purpose=batch', 'application/x-www-form-urlencoded'],
      ['hello', 'text/plain'],
      ['hello', undefined],
    ] as const) {
      const res = await postRaw(server, key, body, type);
      expect(res.status, `${type}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_content_type', type: 'invalid_request_error' });
    }
  });

  it('400 invalid_multipart when the body cannot be parsed', async () => {
    const noBoundary = await postRaw(server, key, 'whatever', 'multipart/form-data');
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body.error.code).toBe('invalid_multipart');
    const truncated = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"a":1}\n`;
    const res = await postRaw(server, key, truncated, `multipart/form-data; boundary=${BOUNDARY}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_multipart');
  });

  it('400 invalid_purpose for any purpose but batch, before or after the file, or none', async () => {
    const before = await uploadFile(server.baseUrl, key, requestLines(1), { purpose: 'assistants' });
    expect(before.status).toBe(400);
    expect(before.body.error).toMatchObject({ code: 'invalid_purpose', param: 'purpose' });
    const filesBefore = blobFiles(server).length;
    const after = await uploadFile(server.baseUrl, key, requestLines(1), { purpose: 'batch_output', fileFirst: true });
    expect(after.status).toBe(400);
    expect(after.body.error.code).toBe('invalid_purpose');
    expect(blobFiles(server).length).toBe(filesBefore); // the stored blob was removed again
    const missing = await uploadFile(server.baseUrl, key, requestLines(1), { purpose: null });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('invalid_purpose');
  });

  it('400 missing_file without a file field', async () => {
    const { body, contentType } = multipart([{ name: 'purpose', content: 'batch' }]);
    const res = await postRaw(server, key, body, contentType);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'missing_file', param: 'file' });
  });

  it('400 empty_file for zero bytes', async () => {
    const res = await uploadFile(server.baseUrl, key, '');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'empty_file', param: 'file' });
  });

  it('400 invalid_file_type (invalid_request_error, param file) for a filename that is not .jsonl', async () => {
    const res = await uploadFile(server.baseUrl, key, requestLines(1), { filename: 'input.csv' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_file_type', param: 'file' });
  });

  it('413 file_too_large as soon as 100 MB is crossed; no record and no blob remain', async () => {
    const blobsBefore = blobFiles(server).length;
    const listBefore = (await call(server.baseUrl, 'GET', '/v1/files', { key })).body.data.length;
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;
    const line = Buffer.from(`${JSON.stringify({ custom_id: 'x', pad: 'p'.repeat(1000) })}\n`);
    const total = 100 * 1024 * 1024 + 64 * 1024; // just past the limit; the client keeps sending
    const res = await rawUpload(server.baseUrl, key, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, async (req) => {
      const source = Readable.from(
        (function* () {
          yield Buffer.from(head);
          for (let sent = 0; sent < total; sent += line.length) yield line;
          yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
        })(),
      );
      source.pipe(req);
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'file_too_large', type: 'invalid_request_error' });
    expect(blobFiles(server).length).toBe(blobsBefore);
    expect((await call(server.baseUrl, 'GET', '/v1/files', { key })).body.data.length).toBe(listBefore);
  }, 60_000);

  it('401 before reading the body when the key is missing', async () => {
    const res = await uploadFile(server.baseUrl, '', requestLines(1));
    expect(res.status).toBe(401);
  });
});

/** Blob storage that accepts nothing: every write and read fails. */
class FailingBlobStore implements BlobStore {
  async put(_key: string, body: Readable | AsyncIterable<Uint8Array | string>): Promise<never> {
    // Read a little, as a real store would, then fail.
    for await (const _chunk of body) break;
    throw new Error('disk on fire');
  }
  async get(): Promise<never> {
    throw new Error('disk on fire');
  }
  async stat(): Promise<never> {
    throw new Error('disk on fire');
  }
  async delete(): Promise<void> {}
}

describe('storage failures', () => {
  let failing: TestServer;
  beforeAll(async () => {
    failing = await startTestServer({ overrides: { blobs: new FailingBlobStore() } });
  });
  afterAll(() => failing.close());

  it('500 storage_error when the blob store fails', async () => {
    const tenant = await failing.newTenant();
    const res = await uploadFile(failing.baseUrl, tenant.key, requestLines(2));
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'storage_error', type: 'internal_error', message: 'Storage error; retry the request' });
    const list = await call(failing.baseUrl, 'GET', '/v1/files', { key: tenant.key });
    expect(list.body.data).toEqual([]);
  });
});

/** GET/DELETE /v1/files: list (order, purpose, after, limit), retrieve, download, soft delete, isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { download, requestLines, uploadOk } from '../batches/support/batch-helpers.js';

let server: TestServer;
let key: string;
let other: string;
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant());
  ({ key: other } = await server.newTenant());
  for (let i = 0; i < 5; i++) ids.push(await uploadOk(server.baseUrl, key, requestLines(i + 1, `f${i}`)));
});
afterAll(() => server.close());

const list = (query = '', k = key) => call(server.baseUrl, 'GET', `/v1/files${query}`, { key: k });

describe('GET /v1/files', () => {
  it('lists newest first by default, with the list envelope', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, first_id: ids[4], last_id: ids[0] });
    expect(res.body.data.map((f: any) => f.id)).toEqual([...ids].reverse());
    expect(res.body.data[0]).toHaveProperty('status_details', null);
  });

  it('order=asc lists oldest first', async () => {
    const res = await list('?order=asc');
    expect(res.body.data.map((f: any) => f.id)).toEqual(ids);
  });

  it('pages with limit and after until has_more is false', async () => {
    const seen: string[] = [];
    let after = '';
    for (let page = 0; page < 10; page++) {
      const res = await list(`?limit=2${after ? `&after=${after}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((f: any) => f.id));
      if (!res.body.has_more) break;
      after = res.body.last_id;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('after the last item gives an empty page with null ids', async () => {
    const res = await list(`?after=${ids[0]}`);
    expect(res.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    const asc = await list(`?order=asc&after=${ids[4]}`);
    expect(asc.body.data).toEqual([]);
  });

  it('limit bounds: 1 and 10000 are fine; anything else is 400 invalid_limit', async () => {
    expect((await list('?limit=1')).body).toMatchObject({ has_more: true, data: [{ id: ids[4] }] });
    expect((await list('?limit=10000')).status).toBe(200);
    for (const bad of ['0', '-1', '10001', 'abc', '1.5', '', '2e3']) {
      const res = await list(`?limit=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_limit', param: 'limit', type: 'invalid_request_error' });
    }
  });

  it('filters by purpose and rejects unknown purposes and orders', async () => {
    expect((await list('?purpose=batch')).body.data).toHaveLength(5);
    expect((await list('?purpose=batch_output')).body.data).toEqual([]);
    expect((await list('?purpose=fine-tune')).status).toBe(400);
    expect((await list('?order=sideways')).status).toBe(400);
  });

  it('an empty project lists nothing', async () => {
    const res = await list('', other);
    expect(res.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });
});

describe('retrieve and download', () => {
  it('GET /v1/files/{id} answers the file object', async () => {
    const res = await call(server.baseUrl, 'GET', `/v1/files/${ids[2]}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids[2], object: 'file', purpose: 'batch' });
  });

  it('GET /v1/files/{id}/content streams the bytes as application/jsonl', async () => {
    const res = await download(server.baseUrl, key, ids[1]!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jsonl/);
    expect(res.text).toBe(requestLines(2, 'f1'));
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
  });

  it('another project gets the same 404 as a missing file', async () => {
    for (const path of [`/v1/files/${ids[0]}`, `/v1/files/${ids[0]}/content`]) {
      const res = await call(server.baseUrl, 'GET', path, { key: other });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ message: `File ${ids[0]} not found`, code: 'file_not_found' });
    }
    const del = await call(server.baseUrl, 'DELETE', `/v1/files/${ids[0]}`, { key: other });
    expect(del.status).toBe(404);
    const missing = await call(server.baseUrl, 'GET', '/v1/files/file-nope', { key });
    expect(missing.body.error.message).toBe('File file-nope not found');
  });
});

describe('DELETE /v1/files/{id}', () => {
  it('soft-deletes: 404 at once on retrieve, download, list and a second delete', async () => {
    const id = await uploadOk(server.baseUrl, key, requestLines(1, 'gone'));
    const res = await call(server.baseUrl, 'DELETE', `/v1/files/${id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, object: 'file', deleted: true });
    expect((await call(server.baseUrl, 'GET', `/v1/files/${id}`, { key })).status).toBe(404);
    expect((await download(server.baseUrl, key, id)).status).toBe(404);
    expect((await list()).body.data.map((f: any) => f.id)).not.toContain(id);
    const again = await call(server.baseUrl, 'DELETE', `/v1/files/${id}`, { key });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('file_not_found');
    // No batch reads it, so its blob is gone too.
    expect(await server.core.blobs.stat(`files/${id}.jsonl`)).toBeNull();
  });
});

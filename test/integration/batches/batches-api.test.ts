/** GET /v1/batches (pagination edges), GET /v1/batches/{id}, cancel rules, cross-project 404s. No runner here. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { createBatch, requestLines, uploadOk } from './support/batch-helpers.js';

let server: TestServer;
let key: string;
let other: string;
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant());
  ({ key: other } = await server.newTenant());
  const fileId = await uploadOk(server.baseUrl, key, requestLines(2));
  for (let i = 0; i < 25; i++) {
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
});
afterAll(() => server.close());

const list = (query = '', k = key) => call(server.baseUrl, 'GET', `/v1/batches${query}`, { key: k });
const newestFirst = () => [...ids].reverse();

describe('GET /v1/batches', () => {
  it('an empty project gives an empty list with null ids', async () => {
    expect((await list('', other)).body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('defaults to 20, newest first, and pages with after', async () => {
    const first = await list();
    expect(first.body.data).toHaveLength(20);
    expect(first.body.has_more).toBe(true);
    expect(first.body.first_id).toBe(ids[24]);
    expect(first.body.data.map((b: any) => b.id)).toEqual(newestFirst().slice(0, 20));
    const second = await list(`?after=${first.body.last_id}`);
    expect(second.body.data.map((b: any) => b.id)).toEqual(newestFirst().slice(20));
    expect(second.body.has_more).toBe(false);
    expect((await list(`?after=${second.body.last_id}`)).body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('walks every batch exactly once in pages of 7', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const res: any = await list(`?limit=7${after ? `&after=${after}` : ''}`);
      seen.push(...res.body.data.map((b: any) => b.id));
      after = res.body.has_more ? res.body.last_id : null;
    } while (after);
    expect(seen).toEqual(newestFirst());
  });

  it('limit 1..100; anything else is 400 invalid_limit', async () => {
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).body.data).toHaveLength(25);
    for (const bad of ['0', '101', '-1', 'x', '1.0']) {
      const res = await list(`?limit=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_limit', param: 'limit' });
    }
  });
});

describe('GET /v1/batches/{id} and isolation', () => {
  it('retrieves a batch', async () => {
    const res = await call(server.baseUrl, 'GET', `/v1/batches/${ids[3]}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids[3], status: 'validating', request_counts: { total: 2, completed: 0, failed: 0 } });
  });

  it('a missing batch and another project\'s batch are the same 404', async () => {
    const missing = await call(server.baseUrl, 'GET', '/v1/batches/batch_nope', { key });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ message: 'Batch not found: batch_nope', code: 'batch_not_found' });
    for (const [method, path] of [['GET', `/v1/batches/${ids[0]}`], ['POST', `/v1/batches/${ids[0]}/cancel`]] as const) {
      const res = await call(server.baseUrl, method, path, { key: other });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe(`Batch not found: ${ids[0]}`);
    }
  });
});

describe('POST /v1/batches/{id}/cancel', () => {
  it('moves a validating batch to cancelling, idempotently (cancelling_at set once)', async () => {
    const first = await call(server.baseUrl, 'POST', `/v1/batches/${ids[5]}/cancel`, { key });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('cancelling');
    expect(first.body.cancelling_at).toEqual(expect.any(Number));
    await new Promise((r) => setTimeout(r, 1100));
    const again = await call(server.baseUrl, 'POST', `/v1/batches/${ids[5]}/cancel`, { key });
    expect(again.status).toBe(200);
    expect(again.body.cancelling_at).toBe(first.body.cancelling_at);
  });

  it('409 batch_terminal on a terminal batch', async () => {
    const failed = await createBatch(server.baseUrl, key, { input_file_id: 'file-none', endpoint: '/v1/chat/completions' });
    expect(failed.status).toBe(404);
    const failedId = (await list('?limit=1')).body.data[0].id;
    const res = await call(server.baseUrl, 'POST', `/v1/batches/${failedId}/cancel`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ message: 'Batch already terminal: failed', code: 'batch_terminal' });
    expect(res.headers.get('x-should-retry')).toBe('false');
  });
});

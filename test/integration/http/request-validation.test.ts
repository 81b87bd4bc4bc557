/**
 * Requests refused by the route schemas on the real server, in the words of the checks the
 * handlers keep (readChoice for list queries, requireObject for bodies), and before any
 * billable work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';

const invalid = (message: string, param: string | null, code = 'invalid_request_error') => ({
  error: { message, type: 'invalid_request_error', code, param },
});

describe('request schemas on the real routes', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    key = (await server.newTenant()).key;
  });
  afterAll(async () => server.close());

  it('GET /v1/files refuses a purpose or order outside its list, repeated or not, as readChoice words it', async () => {
    for (const query of ['?purpose=fine-tune', '?purpose=batch&purpose=batch_output']) {
      const res = await call(server.baseUrl, 'GET', `/v1/files${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body, query).toEqual(invalid('purpose must be one of batch, batch_output', 'purpose', 'invalid_purpose'));
    }
    const order = await call(server.baseUrl, 'GET', '/v1/files?order=sideways', { key });
    expect(order.status).toBe(400);
    expect(order.body).toEqual(invalid('order must be one of asc, desc', 'order'));
  });

  it.each([
    ['/v1/chat/completions', [1], 'an array'],
    ['/v1/responses', 'text', 'a string'],
    ['/v1/embeddings', 5, 'a number'],
    ['/v1/moderations', null, 'null'],
  ])('POST %s refuses a JSON body that is not an object', async (path, body, got) => {
    const res = await call(server.baseUrl, 'POST', path, { key, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(invalid(`The request body must be a JSON object, got ${got}`, null));
  });

  it('names a nested fault by its path, with indexes in brackets', async () => {
    const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'x' }, { role: 'user', content: [{ type: 'text', text: 1 }] }] };
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body });
    expect(res.body).toEqual(invalid('messages[1].content[0].text must be a string', 'messages[1].content[0].text'));
  });

  it('POST /v1/moderations refuses an empty model before reading input', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/moderations', { key, body: { model: '', input: 5 } });
    expect(res.body).toEqual(invalid('model must be a non-empty string', 'model'));
  });
});

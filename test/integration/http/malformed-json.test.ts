/**
 * Malformed JSON names its place, every time and in the same words on every Node: the
 * ten commonest mistakes on POST /v1/chat/completions (400 invalid_json) and on POST
 * /v1/systemone (FastAPI's 422 json_invalid, `loc` at the fault's character position).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { JSON_MISTAKES } from '../../helpers/json-mistakes.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});
afterAll(() => server.close());

const JSON_HEADERS = { 'content-type': 'application/json' };
const post = (route: string, rawBody: string, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'POST', route, { key, rawBody, headers: { ...JSON_HEADERS, ...headers } });

const invalidJson = (message: string) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_json', param: null } });
const decodeError = (index: number, error: string) => ({
  detail: [{ type: 'json_invalid', loc: ['body', index], msg: 'JSON decode error', input: {}, ctx: { error } }],
});

describe('POST /v1/chat/completions', () => {
  it.each(JSON_MISTAKES.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const res = await post('/v1/chat/completions', m.text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(invalidJson(`Invalid JSON body at line ${m.line}, column ${m.column}: ${m.reason}`));
  });

  it('counts columns from after a byte-order mark, and an emoji as one column', async () => {
    const res = await post('/v1/chat/completions', '\ufeff{"model": "😀",\n "n": 1,}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      invalidJson("Invalid JSON body at line 2, column 9: Expected a property name in double quotes after ',', found '}'; JSON allows no trailing comma"),
    );
  });
});

describe('POST /v1/systemone', () => {
  it.each(JSON_MISTAKES.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const res = await post('/v1/systemone', m.text);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(decodeError(m.index, `line ${m.line}, column ${m.column}: ${m.reason}`));
    expect(res.headers.get('x-typesafe-request-id')).toBe(res.headers.get('x-request-id'));
  });

  it('skips a byte-order mark as FastAPI does, in parsing and in the position', async () => {
    const res = await post('/v1/systemone', '\ufeff{"state" "x"}');
    expect(res.status).toBe(422);
    expect(res.body).toEqual(decodeError(9, "line 1, column 10: Expected ':' after the property name, found a string"));
    const valid = await post('/v1/systemone', '\ufeff{"state": "x"}');
    expect(valid.status).toBe(422);
    expect(valid.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'model'],
      ['body', 'questions'],
    ]);
  });
});

describe('other routes', () => {
  it('an admin route words the place the same way', async () => {
    const res = await call(server.baseUrl, 'POST', '/admin/v1/projects', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...JSON_HEADERS },
      rawBody: '{"name": "acme",}',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      invalidJson("Invalid JSON body at line 1, column 17: Expected a property name in double quotes after ',', found '}'; JSON allows no trailing comma"),
    );
  });
});

/**
 * The JSON body parser: nesting bounded at MAX_JSON_DEPTH on every route and in every
 * batch line, text/plain refused naming application/json, and an empty JSON body taken
 * as `{}` on routes whose body is wholly optional (the OpenAI SDKs' cancel).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../../src/domain/shared/json-depth.js';
import { createBatch, jsonl, requestLine, startBatch, uploadOk, upstreamYaml } from '../batches/support/batch-helpers.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  // The batch model is bound to a closed port: nothing here runs a line.
  server = await startTestServer({ yaml: upstreamYaml('http://127.0.0.1:9') });
  ({ key } = await server.newTenant());
});
afterAll(() => server.close());

/** `{"a":{"a":…}}` with `levels` objects in all, as text (JSON.stringify itself would overflow). */
const nestedText = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
const nestedArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

const TOO_DEEP = {
  message: `Request body nests deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON bodies`,
  type: 'invalid_request_error',
  code: 'json_too_deep',
  param: null,
};

const post = (path: string, rawBody: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  call(server.baseUrl, 'POST', path, { key, rawBody, headers });

describe('nesting depth', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(jsonNestsDeeperThan(nestedText(64), 64)).toBe(false);
    expect(jsonNestsDeeperThan(nestedText(65), 64)).toBe(true);
    expect(jsonNestsDeeperThan(nestedArrays(65), 64)).toBe(true);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '[[[[{{{{\\"[[[[' }), 2)).toBe(false);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '\\' }) + '[[[', 2)).toBe(true);
  });

  it.each([
    ['/v1/chat/completions', (deep: string) => `{"model":"gpt-oss-120b","messages":[{"role":"user","content":"x"}],"metadata":${deep}}`],
    ['/v1/responses', (deep: string) => `{"model":"gpt-oss-120b","input":"x","response_format":${deep}}`],
    ['/v1/batches', (deep: string) => `{"input_file_id":"file-x","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":${deep}}`],
    ['/v1/embeddings', (deep: string) => `{"model":"bge-small-en-v1.5","input":${nestedArrays(5_000)},"x":${deep}}`],
  ])('%s answers 400 json_too_deep for 5,000 levels', async (path, body) => {
    const res = await post(path, body(nestedText(5_000)));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: TOO_DEEP });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('a body exactly at the limit is parsed (the route answers about its content)', async () => {
    // The body object is level 1, metadata's chain the other 63.
    const res = await post('/v1/chat/completions', `{"model":"constructor","messages":[{"role":"user","content":"x"}],"metadata":${nestedText(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('model_not_found');
    const over = await post('/v1/chat/completions', `{"model":"constructor","messages":[],"metadata":${nestedText(MAX_JSON_DEPTH)}}`);
    expect(over.body).toEqual({ error: TOO_DEEP });
  });

  it('a batch line 10,000 levels deep is refused at creation, naming its line', async () => {
    const deepLine = `{"custom_id":"deep","method":"POST","url":"/v1/chat/completions","body":{"model":"x","messages":[],"metadata":${nestedText(10_000)}}}`;
    const fileId = await uploadOk(server.baseUrl, key, jsonl([requestLine('ok'), deepLine]));
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: `Line 2 nests deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON bodies`,
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: null,
        line: 2,
      },
    });
  });

  it('__proto__ keys are still refused as by Fastify', async () => {
    const res = await post('/v1/chat/completions', '{"model":"x","__proto__":{"polluted":1}}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'Invalid JSON body: Object contains forbidden prototype property', type: 'invalid_request_error', code: 'invalid_json', param: null } });
  });
});

describe('content type', () => {
  it.each(['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded'])(
    'a JSON route called with %s answers 400 invalid_content_type naming application/json',
    async (type) => {
      const res = await post('/v1/chat/completions', '{"model":"gpt-oss-120b"}', { 'content-type': type });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { message: 'Unsupported Content-Type; send application/json', type: 'invalid_request_error', code: 'invalid_content_type', param: null },
      });
    },
  );
});

describe('empty JSON bodies', () => {
  const admin = (method: string, path: string, headers: Record<string, string> = {}, rawBody?: string) =>
    call(server.baseUrl, method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, rawBody });
  const emptyJson = { 'content-type': 'application/json' };

  it('openai SDK batches.cancel() with content-type: application/json and no body cancels (as openai-python sends it)', async () => {
    const { batch } = await startBatch(server.baseUrl, key, jsonl([requestLine('c1')]));
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
    const cancelled = await client.batches.cancel(batch.id, { headers: emptyJson });
    expect(cancelled.id).toBe(batch.id);
    expect(['cancelling', 'cancelled']).toContain(cancelled.status);
  });

  it('admin key creation with an empty JSON body makes a key named "default"', async () => {
    const project = await admin('POST', '/projects', emptyJson, '{"name":"empty-body"}');
    const res = await admin('POST', `/projects/${project.body.id}/keys`, emptyJson, '');
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('default');
    const revoked = await admin('POST', `/keys/${res.body.id}/revoke`, emptyJson, '');
    expect(revoked.status).toBe(200);
    expect(revoked.body.id).toBe(res.body.id);
  });

  it('a route with required fields still answers 400 for an empty body', async () => {
    const res = await admin('POST', '/projects', emptyJson, '');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: 'Request body is empty; send a JSON object', type: 'invalid_request_error', code: 'invalid_json', param: null },
    });
    const chat = await post('/v1/chat/completions', '');
    expect(chat.body.error.message).toBe('Request body is empty; send a JSON object');
  });
});

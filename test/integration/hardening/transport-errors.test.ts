/**
 * Errors before routing, over raw sockets: every malformed request is answered in the
 * envelope with an `x-request-id` and the right status, and an over-limit body is
 * answered 413 to every one of 16 concurrent clients (no connection reset).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { rawOversizeUpload, rawRequest, type RawResponse } from '../../helpers/raw-http.js';

let server: TestServer;
let port: number;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.baseUrl).port);
  ({ key } = await server.newTenant());
});
afterAll(() => server.close());

function expectEnvelope(res: RawResponse, status: number, code: string, message: string | RegExp) {
  expect(res.status, res.body).toBe(status);
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(res.body);
  expect(body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code, param: null } });
  expect(body.error.message).toMatch(message);
}

const get = (extra: string) => `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\n${extra}\r\n`;
/** Authenticated (the key is read when the test runs), so the body is read after routing. */
const post = (extra: string) => () =>
  `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n${extra}\r\n`;

describe('malformed requests (Node HTTP parser)', () => {
  it.each([
    ['a NUL byte in a header', () => get('x-odd: a\0b\r\n'), 'invalid character in a header'],
    ['a lowercase method', () => 'get /v1/models HTTP/1.1\r\nhost: x\r\n\r\n', 'unknown HTTP method'],
    ['a bad content-length', post('content-length: abc\r\n'), 'invalid Content-Length'],
    ['conflicting content-lengths', post('content-length: 2\r\ncontent-length: 3\r\n'), /Content-Length/],
    ['transfer-encoding with content-length', post('content-length: 2\r\ntransfer-encoding: chunked\r\n'), /Transfer-Encoding/],
    ['a bad chunk size', () => `${post('transfer-encoding: chunked\r\n')()}zz\r\n{}\r\n0\r\n\r\n`, 'invalid chunk size'],
    ['a malformed request line', () => 'GARBAGE\r\n\r\n', /Malformed HTTP request/],
  ])('%s → 400 malformed_request', async (_name, bytes, message) => {
    expectEnvelope(await rawRequest(port, bytes()), 400, 'malformed_request', message);
  });

  it('headers over 16 KB → 431', async () => {
    const res = await rawRequest(port, get(`x-big: ${'a'.repeat(20_000)}\r\n`));
    expectEnvelope(res, 431, 'headers_too_large', 'The request line and headers exceed 16384 bytes');
  });

  it('a 100 KB URL → 431', async () => {
    const res = await rawRequest(port, `GET /v1/models?q=${'a'.repeat(100_000)} HTTP/1.1\r\nhost: x\r\n\r\n`);
    expectEnvelope(res, 431, 'headers_too_large', 'The request line and headers exceed 16384 bytes');
  });
});

describe('requests Node answers without a body of its own', () => {
  it('no Host in HTTP/1.1 → 400 missing_host', async () => {
    const res = await rawRequest(port, `GET /v1/models HTTP/1.1\r\nx-api-key: ${key}\r\nconnection: close\r\n\r\n`);
    expectEnvelope(res, 400, 'missing_host', 'The Host header is required in HTTP/1.1');
  });

  it('no Host in HTTP/1.0 is fine', async () => {
    const res = await rawRequest(port, `GET /v1/models HTTP/1.0\r\nx-api-key: ${key}\r\n\r\n`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).object).toBe('list');
  });

  it('expect: nonsense → 417', async () => {
    const res = await rawRequest(port, post('expect: nonsense\r\ncontent-length: 2\r\n')(), { pieces: ['{}'] });
    expectEnvelope(res, 417, 'expectation_failed', 'Only "Expect: 100-continue" is supported');
  });
});

describe('over-limit bodies under concurrency', () => {
  const head = () => `POST /v1/batches HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n`;
  const SIZE = 20 * 1024 * 1024;

  it.each([
    ['content-length', false],
    ['chunked', true],
  ])('16 concurrent 20 MB bodies (%s) each receive their 413', async (_name, chunked) => {
    const results = await Promise.all(Array.from({ length: 16 }, () => rawOversizeUpload(port, head(), SIZE, chunked)));
    for (const res of results) {
      expect(res.status, `socket: ${res.socketError}`).toBe(413);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(JSON.parse(res.body)).toEqual({
        error: { message: 'Request body is too large', type: 'invalid_request_error', code: 'request_too_large', param: null },
      });
    }
  });
});

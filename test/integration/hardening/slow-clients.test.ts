/**
 * Slow clients, with the server's timeouts configured small: a body that pauses answers
 * 408, headers that trickle answer 408, a request that takes too long overall answers
 * 408 (all in the envelope with a request id), while a steady upload, a slow upstream
 * answer and a long stream, each longer than every timeout, still complete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, stream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { rawRequest, type RawResponse } from '../../helpers/raw-http.js';

const HEADERS_MS = 500;
const BODY_IDLE_MS = 600;
const REQUEST_MS = 2_000;

let upstream: FakeUpstream;
let server: TestServer;
let port: number;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = [
    'server:',
    `  headers_timeout_ms: ${HEADERS_MS}`,
    `  body_idle_timeout_ms: ${BODY_IDLE_MS}`,
    `  request_timeout_ms: ${REQUEST_MS}`,
    'models:',
    `  gpt-oss-120b: { backend: openai, base_url: "${upstream.baseUrl}" }`,
  ].join('\n');
  server = await startTestServer({ yaml });
  port = Number(new URL(server.baseUrl).port);
  ({ key } = await server.newTenant());
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

function expect408(res: RawResponse, message: string) {
  expect(res.status, res.body).toBe(408);
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  expect(JSON.parse(res.body)).toEqual({ error: { message, type: 'invalid_request_error', code: 'request_timeout', param: null } });
}

const chatHead = (length: number) =>
  `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
const CHAT_BODY = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hello there' }] });
const bytesOf = (text: string) => [...Buffer.from(text)].map((b) => Buffer.from([b]));

describe('clients that are too slow', () => {
  it('a body sent one byte a second → 408 after the idle timeout', async () => {
    const res = await rawRequest(port, chatHead(CHAT_BODY.length), { pieces: bytesOf(CHAT_BODY), gapMs: 1_000 });
    expect408(res, `No part of the request body arrived for ${BODY_IDLE_MS} ms; send the body without pausing`);
  });

  it('headers sent one byte a second → 408 (headers timeout)', async () => {
    const head = 'GET /v1/models HTTP/1.1\r\nhost: x\r\n';
    const res = await rawRequest(port, head, { pieces: bytesOf('x-api-key: slow\r\n\r\n'), gapMs: 1_000 });
    expect408(res, 'The request was not received in time; send it again without pausing');
  });

  it('a body that never pauses long but never ends in time → 408 (request timeout)', async () => {
    const body = ' '.repeat(200) + CHAT_BODY;
    const res = await rawRequest(port, chatHead(body.length), { pieces: bytesOf(body), gapMs: BODY_IDLE_MS / 4 });
    expect408(res, 'The request was not received in time; send it again without pausing');
  });
});

describe('slow but steady clients and long answers still work', () => {
  it('a body sent in pieces over longer than the idle timeout is answered', async () => {
    const pieces = CHAT_BODY.match(/.{1,8}/g)!;
    const res = await rawRequest(port, chatHead(CHAT_BODY.length), { pieces, gapMs: BODY_IDLE_MS / 6 });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body).object).toBe('chat.completion');
  });

  it('a multipart upload spread over more than the idle timeout is stored', async () => {
    const boundary = 'sluice-boundary';
    const content = '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{}}\n'.repeat(50);
    const body =
      `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="in.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n${content}\r\n` +
      `--${boundary}--\r\n`;
    const head =
      `POST /v1/files HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\nconnection: close\r\n` +
      `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const pieces = body.match(/[\s\S]{1,400}/g)!;
    expect(pieces.length).toBeGreaterThan(8);
    const res = await rawRequest(port, head, { pieces, gapMs: BODY_IDLE_MS / 6 });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ object: 'file', bytes: Buffer.byteLength(content), filename: 'in.jsonl' });
  });

  it('an upstream answer slower than every client timeout is delivered', async () => {
    upstream.chat({ content: 'late', delayMs: REQUEST_MS + 500 });
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: CHAT_BODY,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe('late');
    upstream.reset();
  });

  it('a stream lasting longer than every client timeout is delivered whole', async () => {
    const words = ['one ', 'two ', 'three ', 'four ', 'five ', 'six'];
    upstream.enqueue('/chat/completions', stream(words, { delayMs: (REQUEST_MS + 400) / words.length }));
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ ...JSON.parse(CHAT_BODY), stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const content = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe(words.join(''));
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
  });
});

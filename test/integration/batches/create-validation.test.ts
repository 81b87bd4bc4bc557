/**
 * POST /v1/batches: every message of the spec's "Batch creation validation" table, in its
 * order, with the first offending 1-based line; rejected batches are still stored as failed.
 */
import { closeSync, openSync, ftruncateSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { FilesRepository } from '../../../src/storage/db/repositories/files.repository.js';
import { checkInputLine, newLineRulesState } from '../../../src/domain/batches/batch-input.js';
import { createBatch, jsonl, requestLine, requestLines, uploadOk, type InputLine } from './support/batch-helpers.js';

let server: TestServer;
let key: string;
let projectId: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key, projectId } = await server.newTenant());
});
afterAll(() => server.close());

const ENDPOINT = '/v1/chat/completions';

async function createOver(content: string, body: Record<string, unknown> = {}) {
  const fileId = await uploadOk(server.baseUrl, key, content);
  return createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: ENDPOINT, completion_window: '24h', ...body });
}

/** Asserts the 400 envelope and that the newest batch is stored as failed with the same error. */
async function expectRejected(res: { status: number; body: any }, message: string, line?: number, status = 400) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.message).toBe(message);
  expect(res.body.error.type).toBe('invalid_request_error');
  expect(res.body.error).toHaveProperty('code');
  expect(res.body.error).toHaveProperty('param');
  if (line === undefined) expect(res.body.error).not.toHaveProperty('line');
  else expect(res.body.error.line).toBe(line);
  const newest = (await call(server.baseUrl, 'GET', '/v1/batches?limit=1', { key })).body.data[0];
  expect(newest.status).toBe('failed');
  expect(newest.failed_at).toEqual(expect.any(Number));
  expect(newest.errors).toEqual({
    object: 'list',
    data: [{ code: res.body.error.code, message, line: line ?? null, param: res.body.error.param }],
  });
  const retrieved = await call(server.baseUrl, 'GET', `/v1/batches/${newest.id}`, { key });
  expect(retrieved.body.errors.data[0].message).toBe(message);
}

const line = (overrides: InputLine & Record<string, unknown>, base = requestLine('x')) => ({ ...base, ...overrides });

describe('request parameters', () => {
  it('input_file_id is required (missing or not a string)', async () => {
    await expectRejected(await createBatch(server.baseUrl, key, { endpoint: ENDPOINT }), 'input_file_id is required');
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: 42, endpoint: ENDPOINT }), 'input_file_id is required');
  });

  it('endpoint is required', async () => {
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: 'file-x' }), 'endpoint is required');
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: 'file-x', endpoint: ['x'] }), 'endpoint is required');
  });

  it('completion_window must be "24h"', async () => {
    const res = await createBatch(server.baseUrl, key, { input_file_id: 'file-x', endpoint: ENDPOINT, completion_window: '1h' });
    await expectRejected(res, 'completion_window must be "24h"');
  });

  it('Input file not found (404): absent, deleted, or another project', async () => {
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: 'file-absent', endpoint: ENDPOINT }), 'Input file not found: file-absent', undefined, 404);
    const stranger = await server.newTenant();
    const theirs = await uploadOk(server.baseUrl, stranger.key, requestLines(1));
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: theirs, endpoint: ENDPOINT }), `Input file not found: ${theirs}`, undefined, 404);
    const deleted = await uploadOk(server.baseUrl, key, requestLines(1));
    await call(server.baseUrl, 'DELETE', `/v1/files/${deleted}`, { key });
    await expectRejected(await createBatch(server.baseUrl, key, { input_file_id: deleted, endpoint: ENDPOINT }), `Input file not found: ${deleted}`, undefined, 404);
  });

  it('Input file object missing (404) when the record exists but its blob is gone', async () => {
    const fileId = await uploadOk(server.baseUrl, key, requestLines(2));
    await server.core.blobs.delete(`files/${fileId}.jsonl`);
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: ENDPOINT });
    await expectRejected(res, `Input file object missing: ${fileId}`, undefined, 404);
  });
});

describe('file-level rules', () => {
  it('Input file contains no JSONL lines (whitespace only)', async () => {
    await expectRejected(await createOver('\n   \n\t\n'), 'Input file contains no JSONL lines');
  });

  it('Input file exceeds maximum size of 209715200 bytes', async () => {
    // A sparse blob of 200 MB + 1 byte with its record: uploads stop at 100 MB.
    const id = 'file-sparse00000000000000000000';
    const blobKey = `files/${id}.jsonl`;
    const file = path.join(server.dataDir, 'blobs', blobKey);
    mkdirSync(path.dirname(file), { recursive: true });
    const fd = openSync(file, 'w');
    ftruncateSync(fd, 209_715_201);
    closeSync(fd);
    const now = Date.now();
    await new FilesRepository(server.core.database).insert({
      id, projectId, purpose: 'batch', filename: 'huge.jsonl', bytes: 209_715_201, blobKey, isError: false,
      status: 'processed', batchId: null, createdAtMs: now, expiresAtMs: null, deletedAtMs: null,
    });
    const res = await createBatch(server.baseUrl, key, { input_file_id: id, endpoint: ENDPOINT });
    await expectRejected(res, 'Input file exceeds maximum size of 209715200 bytes');
  });

  it('Input file exceeds maximum of 50000 lines', async () => {
    const tiny = (i: number) => JSON.stringify({ custom_id: `c${i}`, method: 'POST', url: ENDPOINT, body: { m: 1 } });
    const content = `${Array.from({ length: 50_001 }, (_, i) => tiny(i)).join('\n')}\n`;
    await expectRejected(await createOver(content), 'Input file exceeds maximum of 50000 lines');
  }, 60_000);

  it('exactly 50000 lines are accepted', async () => {
    const tiny = (i: number) => JSON.stringify({ custom_id: `c${i}`, method: 'POST', url: ENDPOINT, body: { m: 1 } });
    const res = await createOver(`${Array.from({ length: 50_000 }, (_, i) => tiny(i)).join('\n')}\n`);
    expect(res.status).toBe(200);
    expect(res.body.request_counts.total).toBe(50_000);
  }, 60_000);
});

describe('line rules, in the spec order, first offending line wins', () => {
  const ok = requestLine('first');
  const cases: Array<[string, Array<InputLine | string>, string]> = [
    ['invalid JSON', [ok, '{"custom_id": "a",'], 'Line 2 is not valid JSON'],
    ['an array', [ok, '[1,2]'], 'Line 2 must be a JSON object'],
    ['a primitive', [ok, '"text"'], 'Line 2 must be a JSON object'],
    ['custom_id missing', [ok, line({ custom_id: undefined })], 'Line 2 is missing custom_id'],
    ['custom_id not a string', [ok, line({ custom_id: 7 })], 'Line 2 is missing custom_id'],
    ['duplicate custom_id', [ok, line({ custom_id: 'first' })], 'Line 2 duplicates custom_id "first"'],
    ['method GET', [ok, line({ method: 'GET' })], 'Line 2 method must be "POST"'],
    ['method missing', [ok, line({ method: undefined })], 'Line 2 method must be "POST"'],
    ['url missing', [ok, line({ url: undefined })], 'Line 2 is missing url'],
    ['url not allowed', [ok, line({ url: '/v1/embeddings' })], 'Line 2 url "/v1/embeddings" is not an allowed batch endpoint'],
    ['url with a trailing slash', [ok, line({ url: '/v1/chat/completions/' })], 'Line 2 url "/v1/chat/completions/" is not an allowed batch endpoint'],
    ['body missing', [ok, line({ body: undefined })], 'Line 2 is missing body'],
    ['body empty', [ok, line({ body: {} })], 'Line 2 is missing body'],
    ['body an array', [ok, line({ body: [1] })], 'Line 2 is missing body'],
    ['stream=true', [ok, line({ body: { model: 'm', messages: [], stream: true } })], 'Line 2 has stream=true; streaming is not supported in batch mode'],
    ['background=true', [ok, line({ body: { model: 'm', input: 'hi', background: true } })], 'Line 2 has background=true; background responses are not supported in batch mode'],
    ['previous_response_id', [ok, line({ body: { model: 'm', input: 'hi', previous_response_id: 'resp_1' } })], 'Line 2 has previous_response_id; a batch line cannot continue a stored response'],
  ];
  for (const [name, lines, message] of cases) {
    it(`${name} → ${message}`, async () => {
      await expectRejected(await createOver(jsonl(lines)), message, 2);
    });
  }

  it('Line N exceeds maximum size of 1048576 bytes', async () => {
    const big = line({ body: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(1_048_576) }] } });
    await expectRejected(await createOver(jsonl([ok, big])), 'Line 2 exceeds maximum size of 1048576 bytes', 2);
  });

  it('counts blank lines in line numbers and reports the first violation only', async () => {
    const content = jsonl([ok, '', '   ', line({ custom_id: 'first' }), '[]']);
    await expectRejected(await createOver(content), 'Line 4 duplicates custom_id "first"', 4);
  });

  it('Line N url "X" does not match the batch endpoint "Y" (lines disagree on url)', () => {
    // Only one endpoint is allowed today, so lines can disagree only once more are: checked directly.
    const state = { ...newLineRulesState(), url: '/v1/other' };
    expect(checkInputLine(requestLine('a'), 3, state)?.message).toBe(
      'Line 3 url "/v1/chat/completions" does not match the batch endpoint "/v1/other"',
    );
  });

  it('endpoint "X" does not match the url "Y" used by the input file', async () => {
    const res = await createOver(requestLines(2), { endpoint: '/v1/embeddings' });
    await expectRejected(res, 'endpoint "/v1/embeddings" does not match the url "/v1/chat/completions" used by the input file');
  });
});

describe('accepted creation', () => {
  it('answers validating with the total, blank lines skipped, method in any case', async () => {
    const content = jsonl(['', requestLine('a'), line({ custom_id: 'b', method: 'post' }), '  ', line({ custom_id: 'c', method: 'Post' })]);
    const res = await createOver(content, { metadata: { team: 'search', n: 1 } });
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({
      object: 'batch',
      endpoint: ENDPOINT,
      status: 'validating',
      completion_window: '24h',
      errors: null,
      output_file_id: null,
      error_file_id: null,
      request_counts: { total: 3, completed: 0, failed: 0 },
      metadata: { team: 'search', n: 1 },
      in_progress_at: null,
      completed_at: null,
      cancelling_at: null,
    });
    expect(b.id).toMatch(/^batch_/);
    expect(b.expires_at - b.created_at).toBe(86_400);
  });

  it('metadata is {} when omitted; completion_window defaults to 24h', async () => {
    const fileId = await uploadOk(server.baseUrl, key, requestLines(1));
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: ENDPOINT });
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({});
    expect(res.body.completion_window).toBe('24h');
  });

  it('refuses a batch output file as input', async () => {
    const fileId = await uploadOk(server.baseUrl, key, requestLines(1));
    await server.core.database.db.updateTable('files').set({ purpose: 'batch_output' }).where('id', '=', fileId).execute();
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: ENDPOINT });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('input_file_id');
  });
});

/**
 * Reading the log: a Codex-like session of 10 calls sharing a `prompt_cache_key` is one
 * session with the right sums; bodies are kept only as the project says (`redacted` never
 * keeps the key or an Authorization value, even inside a message; `off` keeps nothing,
 * in the database or the blob store); another project's request, body and session are
 * 404 on every route; every bad filter is an exact 400; the export streams NDJSON.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { admin, FAST_FLUSH_YAML, flushLog, setBodies, storedTextOf } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;
let a: { projectId: string; key: string; keyId: string };
let b: { projectId: string; key: string; keyId: string };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.chat({ usage: { prompt_tokens: 20, completion_tokens: 5, cached_tokens: 12 } });
  server = await startTestServer({
    yaml: `${FAST_FLUSH_YAML}  inline_body_bytes: 2048
models:
  llm:
    kind: chat
    price: { input_per_million_usd: 2, output_per_million_usd: 4 }
    base_url: ${upstream.baseUrl}
`,
  });
  a = await server.newTenant({ balanceUsd: 10 });
  b = await server.newTenant({ balanceUsd: 10 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

async function chat(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, headers, body: { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], ...body } });
  expect(res.status).toBe(200);
  return res.headers.get('x-request-id')!;
}

/** Waits until every id is in the log (the writer flushes in the background). */
async function logged(key: string, ids: readonly string[]): Promise<void> {
  await vi.waitFor(async () => {
    await flushLog(server);
    for (const id of ids) expect((await call(server.baseUrl, 'GET', `/v1/requests/${id}`, { key })).status).toBe(200);
  });
}

/** Every file under the blob store's directory, with its bytes. */
function blobFiles(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else files.set(file, readFileSync(file));
    }
  };
  walk(server.dataDir);
  return files;
}

describe('sessions', () => {
  it('shows 10 calls with one prompt_cache_key as one session, oldest first, with the sums right', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await chat(a.key, { prompt_cache_key: 'codex-session-1', messages: [{ role: 'user', content: `turn ${i}` }] }));
    await logged(a.key, ids);
    const res = await call(server.baseUrl, 'GET', '/v1/requests/sessions/codex-session-1', { key: a.key });
    expect(res.status).toBe(200);
    const usage = await server.core.database.db.selectFrom('usage_records').selectAll().where('request_id', 'in', ids).execute();
    const cost = usage.reduce((sum, u) => sum + Number(u.cost_micros), 0);
    expect(res.body).toMatchObject({
      object: 'request_session',
      id: 'codex-session-1',
      requests: 10,
      usage: { input_tokens: 200, output_tokens: 50, cached_input_tokens: 120 },
      cost_usd: cost / 1e6,
    });
    expect(res.body.data.map((r: any) => r.id)).toEqual(ids);
    expect(res.body.first_at).toBeLessThanOrEqual(res.body.last_at);
    const filtered = await call(server.baseUrl, 'GET', '/v1/requests?session_id=codex-session-1&limit=100', { key: a.key });
    expect(filtered.body.data.map((r: any) => r.id)).toEqual(ids.toReversed());
  });
});

describe('bodies', () => {
  it('off: keeps no body, in the database or the blob store', async () => {
    const blobsBefore = blobFiles();
    const id = await chat(a.key, { messages: [{ role: 'user', content: 'remember PLAINTEXT-MARKER-OFF' }] });
    await logged(a.key, [id]);
    const detail = await call(server.baseUrl, 'GET', `/v1/requests/${id}`, { key: a.key });
    expect(detail.body.body_logged).toBe(false);
    const body = await call(server.baseUrl, 'GET', `/v1/requests/${id}/body`, { key: a.key });
    expect(body.status).toBe(404);
    expect(body.body.error).toMatchObject({ code: 'body_not_found', type: 'invalid_request_error' });
    expect(await storedTextOf(server, [id])).not.toContain('PLAINTEXT-MARKER-OFF');
    expect(await server.core.database.db.selectFrom('request_log_bodies').selectAll().where('id', '=', id).execute()).toEqual([]);
    const blobsAfter = blobFiles();
    for (const [file, bytes] of blobsAfter) {
      if (!file.includes('request-log')) continue;
      expect(blobsBefore.get(file)).toEqual(bytes);
    }
    for (const bytes of blobsAfter.values()) expect(bytes.includes('PLAINTEXT-MARKER-OFF')).toBe(false);
  });

  it('redacted: never keeps the API key or an Authorization value, even inside a message', async () => {
    await setBodies(server, b.projectId, 'redacted');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl';
    const id = await chat(
      b.key,
      {
        messages: [
          { role: 'user', content: `my key is ${b.key} and the header was Authorization: Bearer upstream-secret-123456789 and ${jwt}` },
          { role: 'user', content: 'card 4111 1111 1111 1111, not a card 1234 5678 9012 3456' },
        ],
        metadata: { api_key: 'field-secret-value', note: 'kept' },
      },
      {},
    );
    await logged(b.key, [id]);
    const body = await call(server.baseUrl, 'GET', `/v1/requests/${id}/body`, { key: b.key });
    expect(body.status).toBe(200);
    expect(body.body).toMatchObject({ object: 'request_body', id, mode: 'redacted', truncated: false });
    const stored = await storedTextOf(server, [id]);
    for (const text of [JSON.stringify(body.body), stored]) {
      expect(text).not.toContain(b.key);
      expect(text).not.toContain(b.key.slice('sk-sluice-'.length));
      expect(text).not.toContain('upstream-secret-123456789');
      expect(text).not.toContain(jwt);
      expect(text).not.toContain('4111 1111 1111 1111');
      expect(text).not.toContain('field-secret-value');
    }
    expect(body.body.request.messages[1].content).toBe('card [redacted], not a card 1234 5678 9012 3456');
    expect(body.body.request.metadata).toEqual({ api_key: '[redacted]', note: 'kept' });
    expect(body.body.response.choices[0].message.content).toBe('Hello from the fake upstream.');
  });

  it('full: keeps the bodies as sent; a large one goes to the blob store with a preview in the database', async () => {
    await setBodies(server, b.projectId, 'full');
    const long = 'x'.repeat(5000);
    const id = await chat(b.key, { messages: [{ role: 'user', content: long }] });
    await logged(b.key, [id]);
    const row = await server.core.database.db.selectFrom('request_log_bodies').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.blob_key).toBe(`request-log/${b.projectId}/${id}.json`);
    expect(row.request.length).toBeLessThan(2048);
    const body = await call(server.baseUrl, 'GET', `/v1/requests/${id}/body`, { key: b.key });
    expect(body.body.mode).toBe('full');
    expect(body.body.request.messages[0].content).toBe(long);
  });
});

describe('isolation', () => {
  it("answers 404 for another project's request, body and session on every route", async () => {
    await setBodies(server, b.projectId, 'full');
    const id = await chat(b.key, { prompt_cache_key: 'b-only-session' });
    await logged(b.key, [id]);
    const routes = [
      [`/v1/requests/${id}`, 'request_not_found'],
      [`/v1/requests/${id}/body`, 'request_not_found'],
      ['/v1/requests/sessions/b-only-session', 'session_not_found'],
    ] as const;
    for (const [route, code] of routes) {
      const res = await call(server.baseUrl, 'GET', route, { key: a.key });
      expect(res.status, route).toBe(404);
      expect(res.body.error.code, route).toBe(code);
      expect((await call(server.baseUrl, 'GET', route, { key: b.key })).status, route).toBe(200);
    }
    const list = await call(server.baseUrl, 'GET', '/v1/requests?limit=100', { key: a.key });
    expect(list.body.data.map((r: any) => r.id)).not.toContain(id);
    expect(list.body.data.every((r: any) => r.project_id === a.projectId)).toBe(true);
    // Another project's id is not a cursor of this project's list either.
    const cursor = await call(server.baseUrl, 'GET', `/v1/requests?after=${id}`, { key: a.key });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe('invalid_cursor');
    // Operators see it, and filter by project.
    expect((await admin(server, 'GET', `/requests/${id}`)).body.project_id).toBe(b.projectId);
    expect((await admin(server, 'GET', `/requests/${id}/body`)).status).toBe(200);
    const byProject = await admin(server, 'GET', `/requests?project_id=${a.projectId}&limit=100`);
    expect(byProject.body.data.every((r: any) => r.project_id === a.projectId)).toBe(true);
  });
});

describe('bad input', () => {
  const cases: Array<[string, string, string]> = [
    ['limit=0', 'limit', 'invalid_limit'],
    ['limit=101', 'limit', 'invalid_limit'],
    ['limit=99999999999999999999', 'limit', 'invalid_limit'],
    ['limit=-1', 'limit', 'invalid_limit'],
    ['limit=1.5', 'limit', 'invalid_limit'],
    ['after=no-such-request', 'after', 'invalid_cursor'],
    ["after=req_1'%20OR%201=1--", 'after', 'invalid_cursor'],
    ['since=yesterday', 'since', 'invalid_request_error'],
    ['since=-5', 'since', 'invalid_request_error'],
    ['until=2026-01-01', 'until', 'invalid_request_error'],
    ['until=1e9', 'until', 'invalid_request_error'],
    ['since=200&until=100', 'since', 'invalid_request_error'],
    ['status=abc', 'status', 'invalid_request_error'],
    ['status=600', 'status', 'invalid_request_error'],
    ['status=20', 'status', 'invalid_request_error'],
    ['min_cost_usd=-1', 'min_cost_usd', 'invalid_request_error'],
    ['min_cost_usd=NaN', 'min_cost_usd', 'invalid_request_error'],
    ['min_cost_usd=0.0000001', 'min_cost_usd', 'invalid_request_error'],
    ["model=llm'%3B%20DROP%20TABLE%20request_log%3B--", 'model', 'invalid_request_error'],
    ['tag=%25', 'tag', 'invalid_request_error'],
    ['key_id=a%20b', 'key_id', 'invalid_request_error'],
    [`session_id=${'s'.repeat(257)}`, 'session_id', 'invalid_request_error'],
  ];
  it.each(cases)('GET /v1/requests?%s is a 400 naming %s', async (query, param, code) => {
    const res = await call(server.baseUrl, 'GET', `/v1/requests?${query}`, { key: a.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, code });
    const operators = await admin(server, 'GET', `/requests?${query}`);
    expect(operators.status).toBe(400);
    expect(operators.body.error).toMatchObject({ param, code });
  });

  it('refuses a project_id that is not an id, and an unknown request id is a 404', async () => {
    const res = await admin(server, 'GET', "/requests?project_id=x'%20or%201=1");
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('project_id');
    const missing = await call(server.baseUrl, 'GET', '/v1/requests/req_nothing', { key: a.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('request_not_found');
    expect((await admin(server, 'PATCH', '/projects/nope/logging', { bodies: 'full' })).status).toBe(404);
    expect((await admin(server, 'PATCH', `/projects/${a.projectId}/logging`, { bodies: 'everything' })).status).toBe(400);
  });
});

describe('export', () => {
  it('streams every matching call as NDJSON, one detail record per line', async () => {
    const ids = [await chat(a.key, { prompt_cache_key: 'export-me' }), await chat(a.key, { prompt_cache_key: 'export-me' })];
    await logged(a.key, ids);
    const res = await fetch(`${server.baseUrl}/admin/v1/requests/export?format=ndjson&session_id=export-me`, {
      headers: { authorization: `Bearer ${(await import('../../helpers/harness.js')).ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text()).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((l) => l.id)).toEqual(ids.toReversed());
    expect(lines[0]).toHaveProperty('attempts');
    const bad = await admin(server, 'GET', '/requests/export?format=csv');
    expect(bad.status).toBe(400);
  });
});

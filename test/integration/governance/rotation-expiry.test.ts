/**
 * Rotation and expiry: a rotated key's old secret works until the grace the operator chose
 * ends and never after; a key past its `expires_at` is refused 401 in each wire's envelope,
 * and its console sessions and WebSockets end within the key cache's TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import { inferenceYaml } from '../inference/setup.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until the wall clock is past `unixSeconds` (plus a margin for the second's rounding). */
const until = async (unixSeconds: number) => {
  const wait = unixSeconds * 1000 + 50 - Date.now();
  if (wait > 0) await sleep(wait);
};
const INVALID = { error: { message: 'Invalid credentials', type: 'authentication_error', code: 'invalid_api_key', param: null } };
const EXPIRED = { error: { message: 'This API key has expired', type: 'authentication_error', code: 'expired_api_key', param: null } };

let upstream: FakeUpstream;
let server: TestServer;
let projectId: string;
const models = (key: string) => call(server.baseUrl, 'GET', '/v1/models', { key });
const newKey = async (body: Record<string, unknown> = {}) => (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectId}/keys`, { headers: admin, body })).body;
const rotate = (id: string, body: unknown) => call(server.baseUrl, 'POST', `/admin/v1/keys/${id}/rotate`, { headers: admin, body });

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), env: { AUTH_CACHE_TTL_MS: '1000' } });
  projectId = (await server.newTenant()).projectId;
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('rotation', () => {
  it('issues a new secret; the old one works until the grace ends, then never', async () => {
    const created = await newKey({ name: 'rotating', rpm: 100 });
    expect((await models(created.key)).status).toBe(200);
    const res = await rotate(created.id, { grace_seconds: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'rotating', rpm: 100, active: true });
    expect(res.body.key).toMatch(/^sk-sluice-/);
    expect(res.body.key).not.toBe(created.key);
    expect(res.body.prefix).toBe(res.body.key.slice(0, 16));
    const graceEnd = res.body.previous_key_valid_until as number;
    expect(graceEnd - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(1);
    expect((await models(res.body.key)).status).toBe(200);
    expect((await models(created.key)).status).toBe(200);
    await until(graceEnd + 1);
    const old = await models(created.key);
    expect([old.status, old.body]).toEqual([403, INVALID]);
    expect((await models(res.body.key)).status).toBe(200);
  });

  it('with no grace the old secret stops at once; a second rotation ends the grace of the first', async () => {
    const created = await newKey();
    const first = (await rotate(created.id, { grace_seconds: 0 })).body;
    expect(first.previous_key_valid_until).toBeNull();
    expect((await models(created.key)).status).toBe(403);
    const second = (await rotate(created.id, { grace_seconds: 600 })).body;
    const third = (await rotate(created.id, { grace_seconds: 600 })).body;
    expect((await models(first.key)).status).toBe(403);
    expect((await models(second.key)).status).toBe(200);
    expect((await models(third.key)).status).toBe(200);
  });

  it('refuses a bad grace, an unknown key and a revoked key', async () => {
    const created = await newKey();
    for (const grace of [-1, 2_592_001, 1.5]) {
      const res = await rotate(created.id, { grace_seconds: grace });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('grace_seconds');
    }
    const tooLong = await rotate(created.id, { grace_seconds: 2_592_001 });
    expect(tooLong.body.error.message).toBe('grace_seconds must be a whole number from 0 to 2592000, got 2592001');
    expect((await rotate(created.id, {})).body.error).toMatchObject({ message: 'grace_seconds is required', param: 'grace_seconds' });
    expect((await rotate('key_nope', { grace_seconds: 1 })).status).toBe(404);
    await call(server.baseUrl, 'POST', `/admin/v1/keys/${created.id}/revoke`, { headers: admin });
    const revoked = await rotate(created.id, { grace_seconds: 1 });
    expect([revoked.status, revoked.body.error.code]).toEqual([409, 'key_revoked']);
    expect((await models(created.key)).status).toBe(403);
  });

  it('revoking a key in its grace ends both secrets', async () => {
    const created = await newKey();
    const rotated = (await rotate(created.id, { grace_seconds: 600 })).body;
    await call(server.baseUrl, 'POST', `/admin/v1/keys/${created.id}/revoke`, { headers: admin });
    expect((await models(created.key)).status).toBe(403);
    expect((await models(rotated.key)).status).toBe(403);
  });
});

describe('expiry', () => {
  it('a key works until expires_at, then is 401 expired_api_key on /v1 and authentication_error on /v1/messages; its console session and WebSocket end', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const { key } = await newKey({ expires_at: expiresAt });
    expect((await models(key)).status).toBe(200);
    const session = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential: key } });
    expect(session.status).toBe(200);
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    expect((await call(server.baseUrl, 'GET', '/console/api/session', { headers: { cookie } })).status).toBe(200);
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${key}` } });

    await until(expiresAt);
    const refused = await models(key);
    expect([refused.status, refused.body]).toEqual([401, EXPIRED]);
    const messages = await call(server.baseUrl, 'POST', '/v1/messages', {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: 'gpt-oss-120b', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(401);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: 'This API key has expired' } });
    expect((await call(server.baseUrl, 'GET', '/console/api/session', { headers: { cookie } })).status).toBe(401);
    const closed = await socket.closed;
    expect(closed).toEqual({ code: 1008, reason: 'invalid_credentials' });
    expect(upstream.requests).toEqual([]);
  });
});

/**
 * A key's policy on the admin API: set at creation, shown on every key object, changed
 * and cleared by PATCH, carried on the principal of the key's calls; malformed policies
 * refused with the field named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

const FULL = {
  name: 'team-a',
  models: ['small-*', 'fast'],
  budget: { limit_usd: 12.5, window: 'week' },
  rpm: 60,
  tpm: 100_000,
  metadata: { owner: 'ana', team: 'search' },
  tags: ['team:search', 'env/prod'],
};

describe('key policy on the admin API', () => {
  let server: TestServer;
  let projectId: string;
  const post = (url: string, body?: unknown) => call(server.baseUrl, 'POST', url, { headers: admin, body });
  const patch = (url: string, body: unknown) => call(server.baseUrl, 'PATCH', url, { headers: admin, body });
  const newKey = (body: unknown = {}) => post(`/admin/v1/projects/${projectId}/keys`, body);

  beforeAll(async () => {
    server = await startTestServer();
    projectId = (await post('/admin/v1/projects', { name: 'governed' })).body.id;
  });
  afterAll(async () => server.close());

  it('creates a key with every policy field, shows them on the key and its listing, and puts them on the principal', async () => {
    const expiresAt = inAnHour();
    const res = await newKey({ ...FULL, expires_at: expiresAt });
    expect(res.status).toBe(200);
    const { key, ...shown } = res.body;
    expect(shown).toMatchObject({
      name: 'team-a',
      active: true,
      models: ['small-*', 'fast'],
      budget: { limit_usd: 12.5, window: 'week' },
      rpm: 60,
      tpm: 100_000,
      expires_at: expiresAt,
      metadata: { owner: 'ana', team: 'search' },
      tags: ['team:search', 'env/prod'],
      previous_key_valid_until: null,
    });
    const list = await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/keys`, { headers: admin });
    expect(list.body.data.find((k: { id: string }) => k.id === shown.id)).toEqual({ ...shown, last_used_at: null });

    const principal = await server.core.authenticator.authenticate(key, undefined);
    expect(principal.policy).toEqual({
      models: ['small-*', 'fast'],
      budget: { limitMicros: 12_500_000, window: 'week' },
      rpm: 60,
      tpm: 100_000,
      expiresAtMs: expiresAt * 1000,
      metadata: { owner: 'ana', team: 'search' },
      tags: ['team:search', 'env/prod'],
    });
  });

  it('a key without a policy carries none on its principal', async () => {
    const { key } = (await newKey({ name: 'plain' })).body;
    expect((await server.core.authenticator.authenticate(key, undefined)).policy).toBeUndefined();
  });

  it('PATCH /keys/{id} changes the fields given, clears those set to null, keeps the rest; the next call sees it', async () => {
    const created = (await newKey(FULL)).body;
    await server.core.authenticator.authenticate(created.key, undefined);
    const res = await patch(`/admin/v1/keys/${created.id}`, { name: 'team-b', models: ['small-2'], budget: null, rpm: 10, tags: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.id,
      name: 'team-b',
      models: ['small-2'],
      budget: null,
      rpm: 10,
      tpm: 100_000,
      expires_at: null,
      metadata: { owner: 'ana', team: 'search' },
      tags: null,
    });
    expect(res.body.key).toBeUndefined();
    const principal = await server.core.authenticator.authenticate(created.key, undefined);
    expect(principal.policy).toEqual({ models: ['small-2'], rpm: 10, tpm: 100_000, metadata: { owner: 'ana', team: 'search' } });

    const cleared = await patch(`/admin/v1/keys/${created.id}`, { models: null, rpm: null, tpm: null, metadata: null });
    expect(cleared.body).toMatchObject({ name: 'team-b', models: null, budget: null, rpm: null, tpm: null, metadata: null, tags: null });
    expect((await server.core.authenticator.authenticate(created.key, undefined)).policy).toBeUndefined();
  });

  it('PATCH of an unknown key is 404 key_not_found', async () => {
    const res = await patch('/admin/v1/keys/key_nope', { rpm: 5 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: 'API key not found: key_nope', type: 'invalid_request_error', code: 'key_not_found', param: null } });
  });

  const refusals: Array<[string, Record<string, unknown>, string, string]> = [
    ['an unknown window', { budget: { limit_usd: 5, window: 'year' } }, 'budget.window must be one of day, week, month, total, got "year"', 'budget.window'],
    ['a budget below zero', { budget: { limit_usd: -0.01, window: 'day' } }, 'budget.limit_usd must not be below zero, got -0.01', 'budget.limit_usd'],
    ['a budget without a limit', { budget: { window: 'day' } }, 'budget.limit_usd must be a number of US dollars', 'budget.limit_usd'],
    ['a budget with an unknown field', { budget: { limit_usd: 1, window: 'day', soft: true } }, 'budget has an unknown field "soft": it takes limit_usd and window', 'budget.soft'],
    ['a budget that is not an object', { budget: 5 }, 'budget must be object', 'budget'],
    ['a duplicate glob', { models: ['small-*', 'small-*'] }, 'models: "small-*" is listed twice; list each model once', 'models'],
    ['a duplicate name in another case', { models: ['Small-A', 'small-a'] }, 'models: "Small-A" is listed twice; list each model once', 'models'],
    ['overlapping globs', { models: ['small-*', '*-mini'] }, 'models: "small-*" and "*-mini" overlap (some model name matches both); list each model once', 'models'],
    ['a name a glob covers', { models: ['gpt-4o*', 'gpt-4o-mini'] }, 'models: "gpt-4o*" and "gpt-4o-mini" overlap (some model name matches both); list each model once', 'models'],
    ['a bad glob', { models: ['small-[ab]'] }, 'models: the pattern "small-[ab]" uses glob syntax other than * and ?', 'models'],
    ['a pattern with a space', { models: ['small a'] }, 'models: the pattern "small a" may hold only printable characters without spaces', 'models'],
    ['an empty pattern', { models: [''] }, 'models: the pattern "" is empty', 'models'],
    ['an empty model list', { models: [] }, 'models must name at least one model (omit it, or set it to null, for every model)', 'models'],
    ['models not an array', { models: 'small-*' }, 'models must be array', 'models'],
    ['a fractional rpm', { rpm: 1.5 }, 'rpm must be integer', 'rpm'],
    ['a zero rpm', { rpm: 0 }, 'rpm must be a whole number from 1 to 1000000, got 0', 'rpm'],
    ['a negative tpm', { tpm: -5 }, 'tpm must be a whole number from 1 to 1000000000, got -5', 'tpm'],
    ['a tpm as text', { tpm: '100' }, 'tpm must be integer', 'tpm'],
    ['a past expiry', { expires_at: 1_000_000_000 }, 'expires_at must be in the future', 'expires_at'],
    ['a metadata value that is not text', { metadata: { owner: 5 } }, 'metadata.owner must be string', 'metadata.owner'],
    ['a tag with a comma', { tags: ['a,b'] }, 'tags: "a,b" must be 1 to 64 letters, digits or _ . : / -', 'tags'],
    ['a repeated tag', { tags: ['x', 'x'] }, 'tags: "x" is listed twice', 'tags'],
  ];

  for (const [what, body, message, param] of refusals) {
    it(`refuses ${what} on create and on PATCH, naming the field, and changes nothing`, async () => {
      const before = (await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/keys`, { headers: admin })).body.data.length;
      const created = await newKey(body);
      expect(created.status).toBe(400);
      expect(created.body.error).toMatchObject({ type: 'invalid_request_error', param });
      expect(created.body.error.message.startsWith(message)).toBe(true);
      expect((await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/keys`, { headers: admin })).body.data.length).toBe(before);

      const target = (await newKey({ name: 'target', rpm: 7 })).body;
      const patched = await patch(`/admin/v1/keys/${target.id}`, body);
      expect(patched.status).toBe(400);
      expect(patched.body.error).toMatchObject({ type: 'invalid_request_error', param });
      expect(patched.body.error.message.startsWith(message)).toBe(true);
      expect((await server.core.authenticator.authenticate(target.key, undefined)).policy).toEqual({ rpm: 7 });
    });
  }

  it('refuses an unknown field on the key body', async () => {
    const res = await newKey({ budget_usd: 5 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'Unrecognized request argument supplied: budget_usd', param: 'budget_usd' });
  });
});

/**
 * Members make keys for themselves, through the console signed in with a real OpenID
 * Connect provider on loopback: a key a user makes is theirs; a member lists, renames,
 * rotates and revokes only their own and sets no policy; admins see and manage every key
 * in the project and its policy; another project's key is not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { signInThrough, startIdentityProvider, type Person, type TestIdentityProvider } from '../../helpers/oidc-provider.js';

let server: TestServer;
let idp: TestIdentityProvider;
const projectA = newUuid();
const projectB = newUuid();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  idp = await startIdentityProvider();
  const yaml = `sign_in:
  oidc:
    provider_name: Test IdP
    issuer: ${idp.issuer}
    client_id: ${idp.clientId}
    scopes: [openid, email, profile, groups]
    roles:
      - { claim: groups, value: a-viewers, project: ${projectA}, role: viewer }
      - { claim: groups, value: a-members, project: ${projectA}, role: member }
      - { claim: groups, value: a-admins, project: ${projectA}, role: admin }
`;
  server = await startTestServer({ yaml, env: { SLUICE_OIDC_CLIENT_SECRET: idp.clientSecret } });
  await server.core.projects.ensureProject(projectA, 'Project A');
  await server.core.projects.ensureProject(projectB, 'Project B');
  idp.register(`${server.baseUrl}/console/api/session/oidc/callback`);
});
afterAll(async () => {
  await server?.close();
  await idp?.close();
});

interface UserBrowser {
  cookie: string;
  csrf: string;
  userId: string;
}

async function signInAs(person: Person): Promise<UserBrowser> {
  const { cookie, csrf, session } = await signInThrough(idp, server.baseUrl, person);
  return { cookie, csrf, userId: session.user.id };
}

const as = (browser: UserBrowser, method: string, path: string, body?: unknown) =>
  call(server.baseUrl, method, `/console/api${path}`, { headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf }, ...(body !== undefined && { body }) });

const roleRequired = (message: string, param: string | null = null) => ({ error: { message, type: 'authentication_error', code: 'role_required', param } });

describe('members make keys for themselves', () => {
  let mo: UserBrowser;
  let mia: UserBrowser;
  let ann: UserBrowser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    mo = await signInAs({ sub: 'mo', email: 'mo@example.com', email_verified: true, groups: ['a-members'] });
    mia = await signInAs({ sub: 'mia', email: 'mia@example.com', email_verified: true, groups: ['a-members'] });
    ann = await signInAs({ sub: 'ann', email: 'ann@example.com', email_verified: true, groups: ['a-admins'] });
  });

  it('a key a member makes is theirs; a member may not set its policy', async () => {
    const made = await as(mo, 'POST', `/admin/projects/${projectA}/keys`, { name: 'mo-laptop' });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ name: 'mo-laptop', project_id: projectA, owner_user_id: mo.userId, models: null, rpm: null });
    ids.mo = made.body.id;
    ids.mia = (await as(mia, 'POST', `/admin/projects/${projectA}/keys`, { name: 'mia-ci' })).body.id;
    ids.token = (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectA}/keys`, { headers: admin, body: { name: 'shared' } })).body.id;

    const withPolicy = await as(mo, 'POST', `/admin/projects/${projectA}/keys`, { name: 'fast', rpm: 1000, models: ['*'] });
    expect(withPolicy.status).toBe(403);
    expect(withPolicy.body).toEqual(roleRequired("Setting a key's policy (rpm, models) needs the admin role in the project; you are a member", 'rpm'));
  });

  it('a member lists only their own keys; an admin sees every key in the project', async () => {
    const mine = await as(mo, 'GET', `/admin/projects/${projectA}/keys`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((k: { id: string }) => k.id)).toEqual([ids.mo]);
    const all = await as(ann, 'GET', `/admin/projects/${projectA}/keys`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((k: { id: string; owner_user_id: string | null }) => [k.id, k.owner_user_id]).sort()).toEqual(
      [[ids.mo, mo.userId], [ids.mia, mia.userId], [ids.token, null]].sort(),
    );
  });

  it('a member cannot revoke, rotate or change another\'s key (403), nor reach another project\'s (404)', async () => {
    const tooLow = roleRequired('This needs the admin role in the project; you are a member');
    for (const id of [ids.mia, ids.token]) {
      const revoke = await as(mo, 'POST', `/admin/keys/${id}/revoke`);
      expect(revoke.status).toBe(403);
      expect(revoke.body).toEqual(tooLow);
      expect((await as(mo, 'POST', `/admin/keys/${id}/rotate`, { grace_seconds: 0 })).body).toEqual(tooLow);
      expect((await as(mo, 'PATCH', `/admin/keys/${id}`, { name: 'taken' })).body).toEqual(tooLow);
    }
    const elsewhere = (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectB}/keys`, { headers: admin, body: { name: 'b' } })).body;
    const revoke = await as(mo, 'POST', `/admin/keys/${elsewhere.id}/revoke`);
    expect(revoke.status).toBe(404);
    expect(revoke.body.error).toMatchObject({ code: 'project_not_found', message: `Project not found: ${projectB}` });
    const keys = await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectA}/keys`, { headers: admin });
    expect(keys.body.data.every((k: { active: boolean; name: string }) => k.active && k.name !== 'taken')).toBe(true);
  });

  it('a member renames, rotates and revokes their own key, but does not change its policy', async () => {
    const renamed = await as(mo, 'PATCH', `/admin/keys/${ids.mo}`, { name: 'mo-desktop' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('mo-desktop');
    const policy = await as(mo, 'PATCH', `/admin/keys/${ids.mo}`, { rpm: 5 });
    expect(policy.status).toBe(403);
    expect(policy.body).toEqual(roleRequired("Setting a key's policy (rpm) needs the admin role in the project; you are a member", 'rpm'));
    const rotated = await as(mo, 'POST', `/admin/keys/${ids.mo}/rotate`, { grace_seconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.key).toMatch(/^sk-sluice-/);
    expect(rotated.body.previous_key_valid_until).toEqual(expect.any(Number));
    const revoked = await as(mo, 'POST', `/admin/keys/${ids.mo}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: ids.mo, active: false, owner_user_id: mo.userId, rpm: null });
  });

  it('an admin sets any key\'s policy and revokes any key; a viewer makes none', async () => {
    const patched = await as(ann, 'PATCH', `/admin/keys/${ids.mia}`, { rpm: 30, budget: { limit_usd: 2, window: 'day' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ rpm: 30, budget: { limit_usd: 2, window: 'day' }, owner_user_id: mia.userId });
    expect((await as(ann, 'POST', `/admin/keys/${ids.token}/revoke`)).status).toBe(200);
    const own = await as(ann, 'POST', `/admin/projects/${projectA}/keys`, { name: 'ann-ops', models: ['small-*'] });
    expect(own.body).toMatchObject({ owner_user_id: ann.userId, models: ['small-*'] });

    const viewer = await signInAs({ sub: 'vic', email: 'vic@example.com', email_verified: true, groups: ['a-viewers'] });
    const refused = await as(viewer, 'POST', `/admin/projects/${projectA}/keys`, { name: 'mine' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(roleRequired('This needs the member role in the project; you are a viewer'));
  });
});

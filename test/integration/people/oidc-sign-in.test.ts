/**
 * Console sign-in through a real OpenID Connect provider on loopback (oidc-provider):
 * the authorization-code flow with PKCE, state and nonce; users provisioned and mapped to
 * roles from their groups; each role's exact reach through the console; and every
 * refusal (forged or expired ID token, wrong state, a replayed code or callback, an
 * unmapped person, too many attempts from one address) sent back to the sign-in page with
 * its reason, audited, and with no session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { presentCallback, signInThrough, startIdentityProvider, walkToCallback, type Person, type SignedInBrowser, type TestIdentityProvider } from '../../helpers/oidc-provider.js';

let server: TestServer;
let idp: TestIdentityProvider;
const projectA = newUuid();
const projectB = newUuid();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  idp = await startIdentityProvider();
  const yaml = `console:
  sign_in_attempts_per_minute: 1000
sign_in:
  oidc:
    provider_name: Test IdP
    issuer: ${idp.issuer}
    client_id: ${idp.clientId}
    scopes: [openid, email, profile, groups]
    operators:
      - { claim: groups, value: platform }
    roles:
      - { claim: groups, value: a-viewers, project: ${projectA}, role: viewer }
      - { claim: groups, value: a-members, project: ${projectA}, role: member }
      - { claim: groups, value: a-admins, project: ${projectA}, role: admin }
      - { claim: groups, value: a-owners, project: ${projectA}, role: owner }
      - { claim: groups, value: a-owners, project: ${projectA}, role: viewer }
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

type UserBrowser = SignedInBrowser;

async function signInAs(person: Person): Promise<UserBrowser> {
  const browser = await signInThrough(idp, server.baseUrl, person);
  expect(browser.location).toBe('/console/');
  return browser;
}

const as = (browser: UserBrowser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(server.baseUrl, method, `/console/api${path}`, { headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf, ...headers }, ...(body !== undefined && { body }) });

const lastAudit = async (action: string) => (await call(server.baseUrl, 'GET', `/admin/v1/audit?action=${action}&limit=1`, { headers: admin })).body.data[0];

describe('sign-in through the identity provider', () => {
  it('offers the provider on the sign-in page', async () => {
    const options = await call(server.baseUrl, 'GET', '/console/api/session/options');
    expect(options.body).toEqual({ object: 'sign_in_options', oidc: { provider_name: 'Test IdP', start_url: '/console/api/session/oidc/start' } });
  });

  it('redirects to the provider with PKCE (S256), state and nonce, and keeps the flow in an HttpOnly cookie', async () => {
    const start = await fetch(`${server.baseUrl}/console/api/session/oidc/start`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const url = new URL(start.headers.get('location')!);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.baseUrl}/console/api/session/oidc/callback`);
    const cookie = start.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^sluice_oidc_flow=[\w-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('Path=/console/api/session/oidc');
  });

  it('provisions the user on first sign-in with the mapped role, opens an HttpOnly session, and audits it', async () => {
    const browser = await signInAs({ sub: 'dana', email: 'Dana@Example.com', email_verified: true, name: 'Dana', groups: ['a-admins', 'unrelated'] });
    expect(browser.session).toMatchObject({
      object: 'console_session',
      role: 'user',
      user: { id: expect.stringMatching(/^user_/), email: 'dana@example.com', name: 'Dana', operator: false },
      projects: [{ id: projectA, name: 'Project A', role: 'admin' }],
    });
    const entry = await lastAudit('sign_in.success');
    expect(entry).toMatchObject({ actor: { type: 'user', id: browser.session.user.id, ip: '127.0.0.1' }, detail: { method: 'oidc', email: 'dana@example.com' } });
    // The same person again is the same user.
    const again = await signInAs({ sub: 'dana', email: 'dana@example.com', email_verified: true, groups: ['a-admins'] });
    expect(again.session.user.id).toBe(browser.session.user.id);
  });
});

describe('claims applied at every sign-in', () => {
  it('raises, lowers and takes back what the claims gave; what was given by hand stays', async () => {
    const gale = { sub: 'gale', email: 'gale@example.com', email_verified: true, name: 'Gale' };
    const first = await signInAs({ ...gale, groups: ['a-admins', 'platform'] });
    const userId = first.session.user.id;
    expect([first.session.user.operator, first.session.projects]).toEqual([true, [{ id: projectA, name: 'Project A', role: 'admin' }]]);
    const byHand = await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectB}/members`, { headers: admin, body: { user_id: userId, role: 'member' } });
    expect(byHand.body).toMatchObject({ role: 'member', granted_by: 'admin' });

    const lowered = await signInAs({ ...gale, groups: ['a-viewers'] });
    expect([lowered.session.user.operator, lowered.session.projects]).toEqual([
      false,
      [
        { id: projectA, name: 'Project A', role: 'viewer' },
        { id: projectB, name: 'Project B', role: 'member' },
      ],
    ]);
    const membersOfA = await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectA}/members`, { headers: admin });
    expect(membersOfA.body.data.find((m: any) => m.user_id === userId)).toMatchObject({ role: 'viewer', granted_by: 'mapping' });
    // The first browser's session reads the lowered roles too.
    expect((await call(server.baseUrl, 'GET', '/console/api/session', { headers: { cookie: first.cookie } })).body.projects[0]).toEqual({ id: projectA, name: 'Project A', role: 'viewer' });

    idp.person = { ...gale, groups: ['unrelated'] };
    const refused = await presentCallback(await walkToCallback(server.baseUrl));
    expect(refused.location).toBe('/console/?sign_in_error=sign_in_not_mapped');
    const after = await call(server.baseUrl, 'GET', `/admin/v1/users/${userId}`, { headers: admin });
    expect(after.body.operator).toBe(false);
    expect((await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectA}/members`, { headers: admin })).body.data.some((m: any) => m.user_id === userId)).toBe(false);
    const membersOfB = await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectB}/members`, { headers: admin });
    expect(membersOfB.body.data.filter((m: any) => m.user_id === userId)).toEqual([expect.objectContaining({ role: 'member', granted_by: 'admin' })]);
  });

  it('an operator made by hand stays one when the claims do not say so', async () => {
    const hal = { sub: 'hal', email: 'hal@example.com', email_verified: true, name: 'Hal' };
    const first = await signInAs({ ...hal, groups: ['a-members'] });
    expect(first.session.user.operator).toBe(false);
    await call(server.baseUrl, 'PATCH', `/admin/v1/users/${first.session.user.id}`, { headers: admin, body: { operator: true } });
    const again = await signInAs({ ...hal, groups: ['a-members'] });
    expect(again.session.user.operator).toBe(true);
  });
});

describe('refusals', () => {
  async function refusedWith(code: string, walk: () => Promise<{ location: string; sessionCookie: string | undefined }>) {
    const { location, sessionCookie } = await walk();
    expect(location).toBe(`/console/?sign_in_error=${code}`);
    expect(sessionCookie).toBeUndefined();
    const entry = await lastAudit('sign_in.failure');
    expect(entry).toMatchObject({ actor: { type: 'anonymous', ip: '127.0.0.1' }, detail: { method: 'oidc', reason: code } });
    return entry;
  }

  it('refuses an ID token signed with a key the provider does not publish', async () => {
    idp.person = { sub: 'mallory', email: 'mallory@example.com', email_verified: true, groups: ['platform'] };
    idp.tokens = 'forged';
    await refusedWith('sign_in_token_invalid', async () => presentCallback(await walkToCallback(server.baseUrl)));
  });

  it('refuses an expired ID token', async () => {
    idp.person = { sub: 'erin', email: 'erin@example.com', email_verified: true, groups: ['platform'] };
    idp.tokens = 'expired';
    await refusedWith('sign_in_token_expired', async () => presentCallback(await walkToCallback(server.baseUrl)));
  });

  it('refuses a wrong state', async () => {
    idp.person = { sub: 'sam', email: 'sam@example.com', email_verified: true, groups: ['platform'] };
    idp.tokens = 'honest';
    await refusedWith('sign_in_state_mismatch', async () => {
      const walked = await walkToCallback(server.baseUrl);
      const url = new URL(walked.callbackUrl);
      url.searchParams.set('state', 'not-the-state');
      return presentCallback(walked, url.href);
    });
  });

  it('refuses a replayed callback, and a replayed code in a new flow', async () => {
    idp.person = { sub: 'rita', email: 'rita@example.com', email_verified: true, groups: ['a-viewers'] };
    idp.tokens = 'honest';
    const walked = await walkToCallback(server.baseUrl);
    expect((await presentCallback(walked)).location).toBe('/console/');
    const flowCookie = walked.sluiceCookies;
    await refusedWith('sign_in_flow_invalid', async () => {
      const answer = await fetch(walked.callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie.header() } });
      return { location: answer.headers.get('location')!, sessionCookie: answer.headers.getSetCookie().find((c) => c.startsWith('sluice_session=')) };
    });
    await refusedWith('sign_in_code_rejected', async () => {
      const fresh = await walkToCallback(server.baseUrl);
      const replay = new URL(walked.callbackUrl);
      replay.searchParams.set('state', new URL(fresh.callbackUrl).searchParams.get('state')!);
      return presentCallback(fresh, replay.href);
    });
  });

  it('refuses a callback with no flow cookie, and one carrying the provider\'s error', async () => {
    await refusedWith('sign_in_flow_invalid', async () => {
      const answer = await fetch(`${server.baseUrl}/console/api/session/oidc/callback?code=abc&state=def`, { redirect: 'manual' });
      return { location: answer.headers.get('location')!, sessionCookie: undefined };
    });
    await refusedWith('sign_in_denied', async () => {
      const walked = await walkToCallback(server.baseUrl);
      const state = new URL(walked.callbackUrl).searchParams.get('state')!;
      return presentCallback(walked, `${server.baseUrl}/console/api/session/oidc/callback?error=access_denied&state=${state}&iss=${encodeURIComponent(idp.issuer)}`);
    });
  });

  it('counts the flow against the sign-in attempts per address: past the limit, start and callback send the browser back', async () => {
    const limited = await startTestServer({
      yaml: `console:\n  sign_in_attempts_per_minute: 3\nsign_in:\n  oidc:\n    issuer: ${idp.issuer}\n    client_id: ${idp.clientId}\n    scopes: [openid, email, profile, groups]\n    operators:\n      - { claim: groups, value: platform }\n`,
      env: { SLUICE_OIDC_CLIENT_SECRET: idp.clientSecret },
    });
    try {
      idp.register(`${limited.baseUrl}/console/api/session/oidc/callback`);
      idp.person = { sub: 'quinn', email: 'quinn@example.com', email_verified: true, groups: ['platform'] };
      idp.tokens = 'honest';
      // Two attempts: the start, then the callback of a completed sign-in.
      expect((await presentCallback(await walkToCallback(limited.baseUrl))).location).toBe('/console/');
      const third = await fetch(`${limited.baseUrl}/console/api/session/oidc/start`, { redirect: 'manual' });
      expect(new URL(third.headers.get('location')!).origin).toBe(idp.issuer);
      const fourth = await fetch(`${limited.baseUrl}/console/api/session/oidc/start`, { redirect: 'manual' });
      expect([fourth.status, fourth.headers.get('location'), fourth.headers.getSetCookie()]).toEqual([302, '/console/?sign_in_error=sign_in_rate_limited', []]);
      const callback = await fetch(`${limited.baseUrl}/console/api/session/oidc/callback?code=x&state=y`, { redirect: 'manual', headers: { cookie: 'sluice_oidc_flow=z' } });
      expect([callback.status, callback.headers.get('location')]).toEqual([302, '/console/?sign_in_error=sign_in_rate_limited']);
      const audit = await call(limited.baseUrl, 'GET', '/admin/v1/audit?action=sign_in.failure&limit=1', { headers: admin });
      expect(audit.body.data[0]).toMatchObject({ actor: { type: 'anonymous', ip: '127.0.0.1' }, detail: { method: 'oidc', reason: 'sign_in_rate_limited' } });
    } finally {
      idp.register(`${server.baseUrl}/console/api/session/oidc/callback`);
      await limited.close();
    }
  });

  it('refuses a person no rule maps, naming them in the audit log', async () => {
    idp.person = { sub: 'uma', email: 'uma@example.com', email_verified: true, groups: ['somewhere-else'] };
    idp.tokens = 'honest';
    const entry = await refusedWith('sign_in_not_mapped', async () => presentCallback(await walkToCallback(server.baseUrl)));
    expect(entry.actor.id).toBe('uma@example.com');
    const users = await call(server.baseUrl, 'GET', '/admin/v1/users?limit=100', { headers: admin });
    expect(users.body.data.map((u: { email: string }) => u.email)).not.toContain('uma@example.com');
  });
});

describe('roles through the console', () => {
  it('a viewer reads usage and the project, and nothing else', async () => {
    const viewer = await signInAs({ sub: 'vic', email: 'vic@example.com', email_verified: true, groups: ['a-viewers'] });
    expect((await as(viewer, 'GET', `/admin/projects/${projectA}`)).status).toBe(200);
    expect((await as(viewer, 'GET', `/admin/projects/${projectA}/usage`)).status).toBe(200);
    expect((await as(viewer, 'GET', `/admin/usage?project_id=${projectA}`)).status).toBe(200);
    expect((await as(viewer, 'GET', '/v1/usage', undefined, { 'x-project-id': projectA })).status).toBe(200);
    const chat = await as(viewer, 'POST', '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hi' }] }, { 'x-project-id': projectA });
    expect(chat.status).toBe(403);
    expect(chat.body.error).toMatchObject({ code: 'role_required', message: 'This needs the member role in the project; you are a viewer' });
    const key = await as(viewer, 'POST', `/admin/projects/${projectA}/keys`, { name: 'mine' });
    expect(key.status).toBe(403);
    expect(key.body.error.code).toBe('role_required');
    const other = await as(viewer, 'GET', `/admin/projects/${projectB}`);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('project_not_found');
    expect((await as(viewer, 'GET', '/v1/usage', undefined, { 'x-project-id': projectB })).status).toBe(404);
    const list = await as(viewer, 'GET', '/admin/projects');
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe('operator_required');
    expect((await as(viewer, 'GET', '/admin/usage')).status).toBe(403);
  });

  it('a member makes keys and revokes their own, but does not manage members or credit', async () => {
    const member = await signInAs({ sub: 'mo', email: 'mo@example.com', email_verified: true, groups: ['a-members'] });
    const key = await as(member, 'POST', `/admin/projects/${projectA}/keys`, { name: 'mo-key' });
    expect(key.status).toBe(200);
    expect((await lastAudit('key.create'))).toMatchObject({ actor: { type: 'user', id: member.session.user.id }, target: { id: key.body.id } });
    expect((await as(member, 'GET', `/admin/projects/${projectA}/keys`)).status).toBe(200);
    expect((await as(member, 'POST', `/admin/keys/${key.body.id}/revoke`)).status).toBe(200);
    expect((await as(member, 'POST', `/admin/projects/${projectA}/members`, { user_id: member.session.user.id, role: 'admin' })).status).toBe(403);
    expect((await as(member, 'POST', `/admin/projects/${projectA}/credits`, { amount_usd: 1 })).status).toBe(403);
    expect((await as(member, 'GET', `/admin/audit?project_id=${projectA}`)).status).toBe(403);
  });

  it('an admin manages keys and members and reads the project\'s audit log, but not billing or the owner role', async () => {
    const adminUser = await signInAs({ sub: 'ann', email: 'ann@example.com', email_verified: true, groups: ['a-admins'] });
    const key = (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectA}/keys`, { headers: admin, body: { name: 'k' } })).body;
    expect((await as(adminUser, 'POST', `/admin/keys/${key.id}/revoke`)).status).toBe(200);
    const otherKey = (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectB}/keys`, { headers: admin, body: { name: 'k' } })).body;
    expect((await as(adminUser, 'POST', `/admin/keys/${otherKey.id}/revoke`)).status).toBe(404);
    const newcomer = (await call(server.baseUrl, 'POST', '/admin/v1/users', { headers: admin, body: { email: 'newcomer@example.com' } })).body;
    const added = await as(adminUser, 'POST', `/admin/projects/${projectA}/members`, { user_id: newcomer.id, role: 'member' });
    expect(added.status).toBe(200);
    const owner = await as(adminUser, 'PATCH', `/admin/projects/${projectA}/members/${newcomer.id}`, { role: 'owner' });
    expect(owner.status).toBe(403);
    expect(owner.body.error.code).toBe('owner_required');
    expect((await as(adminUser, 'POST', `/admin/projects/${projectA}/credits`, { amount_usd: 1 })).status).toBe(403);
    const audit = await as(adminUser, 'GET', `/admin/audit?project_id=${projectA}`);
    expect(audit.status).toBe(200);
    expect(audit.body.data[0]).toMatchObject({ action: 'member.add', actor: { type: 'user', id: adminUser.session.user.id } });
    expect((await as(adminUser, 'GET', '/admin/audit')).status).toBe(403);
    expect((await as(adminUser, 'GET', '/admin/users')).status).toBe(403);
  });

  it('an owner also manages billing; an operator does what the admin token does', async () => {
    const owner = await signInAs({ sub: 'olga', email: 'olga@example.com', email_verified: true, groups: ['a-owners'] });
    expect(owner.session.projects).toEqual([{ id: projectA, name: 'Project A', role: 'owner' }]);
    const credit = await as(owner, 'POST', `/admin/projects/${projectA}/credits`, { amount_usd: 2, reason: 'top-up' });
    expect(credit.status).toBe(200);
    expect(await lastAudit('credit.grant')).toMatchObject({ actor: { type: 'user', id: owner.session.user.id }, project_id: projectA });
    const operator = await signInAs({ sub: 'pat', email: 'pat@example.com', email_verified: true, groups: ['platform'] });
    expect(operator.session.user.operator).toBe(true);
    expect((await as(operator, 'GET', '/admin/projects')).status).toBe(200);
    expect((await as(operator, 'GET', '/admin/users')).status).toBe(200);
    expect((await as(operator, 'GET', `/admin/projects/${projectB}/usage`)).status).toBe(200);
    expect((await as(operator, 'GET', '/v1/usage', undefined, { 'x-project-id': projectB })).status).toBe(200);
  });

  it('a state-changing call without the CSRF token is refused', async () => {
    const owner = await signInAs({ sub: 'olga', email: 'olga@example.com', email_verified: true, groups: ['a-owners'] });
    const res = await call(server.baseUrl, 'POST', `/console/api/admin/projects/${projectA}/credits`, { headers: { cookie: owner.cookie }, body: { amount_usd: 1 } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('csrf_token_invalid');
  });
});

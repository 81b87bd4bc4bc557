/** POST /oauth2/token (RFC 7523), access-token expiry, every invalid_token reason, and the per-agent rate limit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import { assertion, JWT_BEARER, post, startStorefront, type StorefrontEnv } from './support.js';
import { call } from '../../helpers/harness.js';
import { newId } from '../../../src/domain/shared/ids.js';

let offsetMs = 0;
const clock = { nowMs: () => Date.now() + offsetMs };
let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({ agents: 2, overrides: { clock } });
});
afterAll(async () => env?.close());

const exchange = async (form: Record<string, string>) => {
  const response = await fetch(`${env.url}/oauth2/token`, { method: 'POST', body: new URLSearchParams(form) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
};
const tokenUrl = () => `${env.url}/oauth2/token`;
const entitlements = (headers: Record<string, string>) => call(env.url, 'GET', '/agent/entitlements', { headers });
const CHAT = '/gateway/v1/chat/completions';
const chatBody = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] };

describe('the token exchange', () => {
  it('answers a Bearer access token with no-store', async () => {
    const agent = env.agents[0]!;
    const response = await exchange({ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl()) });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ access_token: expect.stringMatching(/^ey/), token_type: 'Bearer', expires_in: 900 });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    const header = JSON.parse(Buffer.from(response.body.access_token.split('.')[0], 'base64url').toString());
    expect(header).toMatchObject({ alg: 'EdDSA', kid: expect.stringMatching(/^k\d+$/) });
  });

  it('refuses bad grants with the RFC 6749 error bodies', async () => {
    const agent = env.agents[0]!;
    const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const now = Math.floor(clock.nowMs() / 1000);
    const replayed = await assertion(agent, tokenUrl());
    expect((await exchange({ grant_type: JWT_BEARER, assertion: replayed })).status).toBe(200);
    const cases: [Record<string, string>, string][] = [
      [{ assertion: replayed }, 'invalid_request'],
      [{ grant_type: 'client_credentials', assertion: replayed }, 'unsupported_grant_type'],
      [{ grant_type: JWT_BEARER }, 'invalid_request'],
      [{ grant_type: JWT_BEARER, assertion: 'not-a-jwt' }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: replayed }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: await assertion(agent, 'https://elsewhere.example/oauth2/token') }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl(), { exp: now - 120 }) }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl(), { exp: now + 3600 }) }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl(), {}, other.privateKey) }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl(), { iss: 'agt_unknown', sub: 'agt_unknown' }) }, 'invalid_grant'],
    ];
    for (const [form, error] of cases) {
      const response = await exchange(form);
      expect(response.status, JSON.stringify(form).slice(0, 80)).toBe(400);
      expect(response.body).toEqual({ error, error_description: expect.any(String) });
    }
  });
});

describe('invalid_token reasons', () => {
  const reasonOf = async (headers: Record<string, string>) => {
    const listed = await entitlements(headers);
    const chatted = await post(env, CHAT, chatBody, headers);
    expect(listed.status).toBe(401);
    expect(chatted.status).toBe(401);
    expect(chatted.body).toEqual(listed.body);
    expect(listed.body).toEqual({ error: 'invalid_token', reason: expect.any(String), message: expect.any(String) });
    return listed.body.reason as string;
  };

  it('names each reason', async () => {
    const token = await env.tokenOf(env.agents[0]!);
    const [head, claims, signature] = token.split('.') as [string, string, string];
    const tampered = `${head}.${claims}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    const stranger = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const now = Math.floor(clock.nowMs() / 1000);
    const foreignKid = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: 'k1' }).setSubject(env.agents[0]!.id).setAudience('urn:sluice:storefront:sluice').setExpirationTime(now + 60).sign(stranger.privateKey);
    const period = JSON.parse(Buffer.from(head, 'base64url').toString()).kid;
    const forged = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: period }).setSubject(env.agents[0]!.id).setAudience('urn:sluice:storefront:sluice').setExpirationTime(now + 60).sign(stranger.privateKey);

    expect(await reasonOf({ authorization: `Bearer ${tampered}` })).toBe('token_invalid');
    expect(await reasonOf({ authorization: `Bearer ${forged}` })).toBe('token_invalid');
    expect(await reasonOf({ authorization: 'Bearer not.a.jwt' })).toBe('token_invalid');
    expect(await reasonOf({ authorization: `Bearer ${foreignKid}` })).toBe('unrecognized_agent_credential');
    expect(await reasonOf({ authorization: 'Basic dXNlcjpwYXNz' })).toBe('malformed_agent_authorization');
    expect(await reasonOf({ authorization: 'Bearer' })).toBe('malformed_agent_authorization');
    expect(await reasonOf({ 'gw-agent-authorization': `Token ${token}` })).toBe('malformed_agent_authorization');
    expect(await reasonOf({ authorization: `Bearer ${token}`, 'gw-agent-authorization': `Bearer ${token}` })).toBe('conflicting_agent_credentials');
    expect(await reasonOf({ authorization: `Bearer ${token}, Receipt rcpt_AAAAAAAAAAAAAAAAAAAAAA` })).toBe('combined_authorization_unsupported');
  });

  it('token_expired once the access token\'s lifetime has passed, cached or not', async () => {
    const agent = env.agents[1]!;
    const seen = await env.tokenOf(agent);
    const unseen = await env.tokenOf(agent);
    expect((await entitlements({ authorization: `Bearer ${seen}` })).status).toBe(200);
    offsetMs += 901_000;
    try {
      expect((await entitlements({ authorization: `Bearer ${seen}` })).body).toMatchObject({ error: 'invalid_token', reason: 'token_expired' });
      expect((await entitlements({ authorization: `Bearer ${unseen}` })).body).toMatchObject({ error: 'invalid_token', reason: 'token_expired' });
    } finally {
      offsetMs = 0;
    }
  });
});

describe('rate limit per agent', () => {
  let limited: StorefrontEnv;
  beforeAll(async () => {
    limited = await startStorefront({ agents: 2, yamlExtra: '  requests_per_minute: 2\n' });
  });
  afterAll(async () => limited?.close());

  it('429 requests_per_minute_exceeded with retry-after, counted per agent', async () => {
    const [a, b] = limited.agents as [StorefrontEnv['agents'][0], StorefrontEnv['agents'][0]];
    for (const agent of [a, b]) {
      await limited.server.features.storefront.services!.store.purchase({
        id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId: agent.id }, kind: 'purchase',
        amountMicros: 1_000_000, paymentRef: `test:${agent.id}`, rail: 'card', detail: null, createdAtMs: Date.now(),
      });
    }
    const tokenA = await limited.tokenOf(a);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await post(limited, CHAT, chatBody, { authorization: `Bearer ${tokenA}` }));
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(statuses[2]!.body.error).toMatchObject({ code: 'requests_per_minute_exceeded', type: 'rate_limit_exceeded' });
    expect(Number(statuses[2]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(limited, CHAT, chatBody, { authorization: `Bearer ${await limited.tokenOf(b)}` })).status).toBe(200);
  });
});

/**
 * Storefront test setup: a Sluice with the storefront on, a fake x402 facilitator, a
 * fake upstream, and registered agents with Ed25519 keys that mint RFC 7523 assertions.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { call, startTestServer, type TestServer, type TestServerOptions } from '../../helpers/harness.js';
import { startFakeFacilitator, type FakeFacilitator } from '../../helpers/fake-facilitator.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';

export const PAY_TO = '0x2096a1B0D54c2B1F8b5a8F2d44f1b6f7D1f0287C';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface Agent {
  id: string;
  privateKey: CryptoKey;
  jwk: JWK;
  kid: string;
}

export async function newAgent(id = `agt_${randomUUID().slice(0, 8)}`): Promise<Agent> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const jwk = await exportJWK(publicKey);
  return { id, privateKey, jwk, kid: await calculateJwkThumbprint(jwk) };
}

/** An RFC 7523 assertion; `claims` override the defaults (aud = the token URL). */
export function assertion(agent: Agent, tokenUrl: string, claims: Record<string, unknown> = {}, key = agent.privateKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: agent.kid })
    .setIssuer(String(claims.iss ?? agent.id))
    .setSubject(String(claims.sub ?? agent.id))
    .setAudience(String(claims.aud ?? tokenUrl))
    .setIssuedAt(now)
    .setExpirationTime(Number(claims.exp ?? now + 120))
    .sign(key);
}

export interface StorefrontEnv {
  server: TestServer;
  facilitator: FakeFacilitator;
  upstream: FakeUpstream;
  agents: Agent[];
  /** `${server.baseUrl}/storefront` */
  url: string;
  tokenOf(agent: Agent): Promise<string>;
  close(): Promise<void>;
}

export function storefrontYaml(upstreamUrl: string, extra = ''): string {
  return `
models:
  gpt-oss-120b:
    backend: openai
    base_url: ${upstreamUrl}
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
storefront:
  plans:
    - { id: credits, kind: credits, description: Credits, minimum_usd: "0.01" }
  anonymous_limit_usd: "5.00"
  x402: { timeout_ms: 500 }
  card: { provider: fake }
${extra}`;
}

export async function startStorefront(options: { agents?: number; env?: Record<string, string>; yamlExtra?: string; overrides?: TestServerOptions['overrides'] } = {}): Promise<StorefrontEnv> {
  const facilitator = await startFakeFacilitator();
  const upstream = await startFakeUpstream();
  const agents = await Promise.all(Array.from({ length: options.agents ?? 2 }, () => newAgent()));
  const server = await startTestServer({
    yaml: storefrontYaml(upstream.baseUrl, options.yamlExtra),
    overrides: options.overrides,
    env: {
      STOREFRONT_FACILITATOR_URL: facilitator.url,
      STOREFRONT_PAY_TO: PAY_TO,
      STOREFRONT_AGENT_KEYS: JSON.stringify(Object.fromEntries(agents.map((a) => [a.id, a.jwk]))),
      ...options.env,
    },
  });
  const url = `${server.baseUrl}/storefront`;
  const tokenOf = async (agent: Agent) => {
    const form = new URLSearchParams({ grant_type: JWT_BEARER, assertion: await assertion(agent, `${url}/oauth2/token`) });
    const response = await fetch(`${url}/oauth2/token`, { method: 'POST', body: form });
    const body = (await response.json()) as { access_token: string };
    if (response.status !== 200) throw new Error(`token exchange failed: ${JSON.stringify(body)}`);
    return body.access_token;
  };
  return {
    server,
    facilitator,
    upstream,
    agents,
    url,
    tokenOf,
    async close() {
      await server.close();
      await facilitator.close();
      await upstream.close();
    },
  };
}

export const post = (env: StorefrontEnv, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(env.url, 'POST', path, { body, headers });

export const decodeHeader = (value: string | null): any => (value ? JSON.parse(Buffer.from(value, 'base64').toString('utf8')) : null);

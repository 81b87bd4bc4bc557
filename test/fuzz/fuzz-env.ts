/** The server the HTTP fuzz runs against: every catalog model bound to a fake upstream, and console sign-in through a test identity provider. */
import { CATALOG_IDS } from '../../src/config/catalog.js';
import { ADMIN_TOKEN } from '../helpers/harness.js';
import { startInferenceEnv, type InferenceEnv } from '../integration/inference/setup.js';
import type { FuzzTarget } from './http-surface.js';
import { startIdentityProvider } from '../helpers/oidc-provider.js';

export async function startFuzzEnv(): Promise<{ env: InferenceEnv; target: FuzzTarget }> {
  const idp = await startIdentityProvider();
  const env = await startInferenceEnv({
    extra: Object.fromEntries(CATALOG_IDS.map((id) => [id, {}])),
    // Limits and credits high enough that the fuzz explores routes, not 429s.
    env: { RATE_LIMIT_RPM: '1000000', FREE_CREDITS_USD: '1000000', SLUICE_OIDC_CLIENT_SECRET: idp.clientSecret },
    yamlTail: `sign_in:\n  oidc:\n    issuer: ${idp.issuer}\n    client_id: ${idp.clientId}\n    default_role: { project: 00000000-0000-4000-8000-000000000000, role: viewer }\n`,
  });
  idp.register(`${env.server.baseUrl}/console/api/session/oidc/callback`);
  const close = env.close.bind(env);
  env.close = async () => {
    await close();
    await idp.close();
  };
  const { key } = await env.server.newTenant();
  return { env, target: { baseUrl: env.server.baseUrl, apiKey: key, adminToken: ADMIN_TOKEN } };
}

export const describeStats = (stats: { requests: number; byStatus: Map<number, number> }): string =>
  `${stats.requests} requests; by status: ${[...stats.byStatus.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${status}×${n}`)
    .join(' ')}`;

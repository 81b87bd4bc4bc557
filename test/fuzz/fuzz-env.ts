/** The server the HTTP fuzz runs against: every catalog model bound to a fake upstream. */
import { CATALOG_IDS } from '../../src/config/catalog.js';
import { ADMIN_TOKEN } from '../helpers/harness.js';
import { startInferenceEnv, type InferenceEnv } from '../integration/inference/setup.js';
import type { FuzzTarget } from './http-surface.js';

export async function startFuzzEnv(): Promise<{ env: InferenceEnv; target: FuzzTarget }> {
  const env = await startInferenceEnv({
    extra: Object.fromEntries(CATALOG_IDS.map((id) => [id, {}])),
    // Limits and credits high enough that the fuzz explores routes, not 429s.
    env: { RATE_LIMIT_RPM: '1000000', FREE_CREDITS_USD: '1000000' },
  });
  const { key } = await env.server.newTenant();
  return { env, target: { baseUrl: env.server.baseUrl, apiKey: key, adminToken: ADMIN_TOKEN } };
}

export const describeStats = (stats: { requests: number; byStatus: Map<number, number> }): string =>
  `${stats.requests} requests; by status: ${[...stats.byStatus.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${status}×${n}`)
    .join(' ')}`;

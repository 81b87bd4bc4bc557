/**
 * Storefront chat with an agent access token vs plain /v1 chat with an API key, against
 * a zero-latency fake upstream, in the same run: requests/s of closed loops, rounds
 * alternating the two routes so drifting load weighs on both alike (target: storefront
 * ≥ 0.85 × /v1). Token verification is cached per token; each storefront call still
 * reads the holder's balance and writes its draw with its ledger movement.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { closedLoopRate, median } from './measure.js';
import { startTestServer } from '../test/helpers/harness.js';
import { startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { newId } from '../src/domain/shared/ids.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLERS = 32;
const BODY = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });

export default async function storefrontBench(): Promise<BenchRow[]> {
  const upstream = await startFakeUpstream();
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const agentId = 'agt_bench';
  const server = await startTestServer({
    yaml: `
models:
  gpt-oss-120b: { backend: openai, base_url: ${upstream.baseUrl}, price: { input_per_million_usd: 0.15, output_per_million_usd: 0.6 } }
rate_limits: { requests_per_minute: 100000000 }
storefront:
  plans: [{ id: credits }]
  requests_per_minute: 100000000
  card: { provider: fake }
`,
    env: { STOREFRONT_AGENT_KEYS: JSON.stringify({ [agentId]: await exportJWK(publicKey) }) },
  });
  try {
    const tenant = await server.newTenant({ balanceUsd: 1_000_000 });
    await server.features.storefront.services!.store.purchase({
      id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId }, kind: 'purchase',
      amountMicros: 1_000_000_000_000, paymentRef: `bench:${randomUUID()}`, rail: 'card', detail: null, createdAtMs: Date.now(),
    });
    const tokenUrl = `${server.baseUrl}/storefront/oauth2/token`;
    const assertion = await new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: 'EdDSA' }).setIssuer(agentId).setSubject(agentId)
      .setAudience(tokenUrl).setIssuedAt().setExpirationTime('2m').sign(privateKey);
    const exchanged = await fetch(tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }) });
    const { access_token: token } = (await exchanged.json()) as { access_token: string };

    const pool = new Pool(server.baseUrl, { connections: CALLERS });
    const caller = (path: string, headers: Record<string, string>) => async () => {
      const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: BODY });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
    };
    const v1 = caller('/v1/chat/completions', { 'x-api-key': tenant.key });
    const storefront = caller('/storefront/gateway/v1/chat/completions', { authorization: `Bearer ${token}` });
    await closedLoopRate(v1, CALLERS, 1);
    await closedLoopRate(storefront, CALLERS, 1);
    const v1Rates: number[] = [];
    const storefrontRates: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const a = await closedLoopRate(v1, CALLERS, SECONDS);
      const b = await closedLoopRate(storefront, CALLERS, SECONDS);
      v1Rates.push(a);
      storefrontRates.push(b);
      ratios.push(b / a);
    }
    await pool.close();
    return [
      { name: '/v1 chat (API key)', value: median(v1Rates), unit: 'req/s', note: `${CALLERS} closed loops, median of ${ROUNDS} rounds` },
      { name: 'storefront chat (agent token)', value: median(storefrontRates), unit: 'req/s' },
      { name: 'storefront / v1', value: median(ratios), unit: 'ratio', note: `target ≥ 0.85; rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}` },
    ];
  } finally {
    await server.close();
    await upstream.close();
  }
}

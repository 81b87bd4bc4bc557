/**
 * Storefront chat with an agent access token vs plain /v1 chat with an API key, against
 * a zero-latency upstream, in the same run: requests/s of closed loops, rounds
 * alternating the two routes so drifting load weighs on both alike (target: storefront
 * ≥ 0.85 × /v1), and the server's CPU per request. The upstream and the load generator
 * run in worker threads, so the main thread carries only the server (BENCH_PROFILE_DIR
 * profiles it per phase). Token verification is cached per token; each storefront call
 * still holds credit against the holder's balance and writes its usage record with its
 * ledger draw.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { BenchRow } from './run.js';
import { median } from './measure.js';
import { closedLoopLoad, startWorkerUpstream, type Load } from './server-load.js';
import { startTestServer } from '../test/helpers/harness.js';
import { newId } from '../src/domain/shared/ids.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLERS = 32;
const BODY = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });

const roundsNote = (xs: number[]) => `rounds ${xs.map((x) => x.toFixed(3)).join(', ')}`;

export default async function storefrontBench(): Promise<BenchRow[]> {
  const upstream = await startWorkerUpstream();
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

    const caller = (path: string, headers: Record<string, string>) => (seconds: number) =>
      closedLoopLoad(server.baseUrl, path, { headers: { 'content-type': 'application/json', ...headers }, body: BODY, connections: CALLERS, seconds });
    const v1 = caller('/v1/chat/completions', { 'x-api-key': tenant.key });
    const storefront = caller('/storefront/gateway/v1/chat/completions', { authorization: `Bearer ${token}` });
    // Warm-ups of 2 s each: after 1 s the first round still ran 0.3–3× the others.
    await v1(2);
    await storefront(2);
    const rounds = { v1: [] as Load[], storefront: [] as Load[] };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.v1.push(await v1(SECONDS));
      rounds.storefront.push(await storefront(SECONDS));
      if (process.env.BENCH_VERBOSE) {
        const [a, b] = [rounds.v1[round]!, rounds.storefront[round]!];
        console.error(`round ${round + 1}: /v1 ${a.rps.toFixed(0)} req/s ${a.cpuPerRequest.toFixed(0)} µs, storefront ${b.rps.toFixed(0)} req/s ${b.cpuPerRequest.toFixed(0)} µs`);
      }
    }
    const ratios = rounds.storefront.map((s, i) => s.rps / rounds.v1[i]!.rps);
    const cpuRatios = rounds.v1.map((v, i) => v.cpuPerRequest / rounds.storefront[i]!.cpuPerRequest);
    const rps = (xs: Load[]) => median(xs.map((x) => x.rps));
    const cpu = (xs: Load[]) => median(xs.map((x) => x.cpuPerRequest));
    return [
      { name: '/v1 chat (API key)', value: rps(rounds.v1), unit: 'req/s', note: `${CALLERS} closed loops, median of ${ROUNDS} rounds` },
      { name: 'storefront chat (agent token)', value: rps(rounds.storefront), unit: 'req/s' },
      { name: 'storefront / v1', value: median(ratios), unit: 'ratio', note: `target ≥ 0.85; ${roundsNote(ratios)}` },
      { name: 'server CPU per request, /v1 then storefront', value: cpu(rounds.v1), unit: 'µs', note: `storefront ${cpu(rounds.storefront).toFixed(0)} µs; main thread` },
      { name: '/v1 CPU ÷ storefront CPU per request', value: median(cpuRatios), unit: 'ratio', note: `the throughput ratio when the server's core is the limit; ${roundsNote(cpuRatios)}` },
    ];
  } finally {
    await server.close();
    await upstream.close();
  }
}

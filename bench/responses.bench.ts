/**
 * A streamed response's first event against a streamed chat completion's first chunk,
 * on the same Sluice in front of the same upstream (proxy.bench.ts's, in a worker): the
 * time from the upstream writing its first chunk to the client's first byte. Rounds
 * alternate the two routes so load from elsewhere weighs on both alike (target: the
 * response adds at most 0.5 ms).
 */
import http from 'node:http';
import type { BenchRow } from './run.js';
import { startUpstream, type Upstream } from './proxy.bench.js';
import { startTestServer } from '../test/helpers/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_ROUND = 50;

interface Route {
  path: string;
  body: Record<string, unknown>;
}
const CHAT: Route = { path: '/v1/chat/completions', body: { model: 'gpt-oss-120b', stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'Say hello in five words.' }] } };
const RESPONSES: Route = { path: '/v1/responses', body: { model: 'gpt-oss-120b', stream: true, max_output_tokens: 16, input: 'Say hello in five words.' } };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Sequential streams: client first byte minus the upstream's first-chunk write, per request. */
async function firstByteGaps(url: string, key: string, upstream: Upstream, route: Route, count: number, agent: http.Agent): Promise<number[]> {
  const gaps: number[] = [];
  for (let i = 0; i < count; i++) {
    const gap = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${url}${route.path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': key } });
      request.on('response', (res) => {
        const id = res.headers['x-request-id'] as string;
        let first = 0;
        res.on('data', () => {
          first ||= performance.timeOrigin + performance.now();
        });
        res.on('end', () => void upstream.firstChunkOf(id).then((at) => resolve(first - at)));
      });
      request.on('error', reject);
      request.end(JSON.stringify(route.body));
    });
    gaps.push(gap);
  }
  return gaps;
}

export default async function responsesBench(): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const sluice = await startTestServer({
    env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' },
    yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "${upstream.url}/v1" }\n`,
  });
  const { key } = await sluice.newTenant({ balanceUsd: 100_000 });
  const agent = new http.Agent({ keepAlive: true });
  try {
    await firstByteGaps(sluice.baseUrl, key, upstream, CHAT, 50, agent);
    await firstByteGaps(sluice.baseUrl, key, upstream, RESPONSES, 50, agent);
    const chat: number[] = [];
    const responses: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const c = await firstByteGaps(sluice.baseUrl, key, upstream, CHAT, PER_ROUND, agent);
      const r = await firstByteGaps(sluice.baseUrl, key, upstream, RESPONSES, PER_ROUND, agent);
      chat.push(...c);
      responses.push(...r);
      added.push(median(r) - median(c));
    }
    return [
      { name: 'streamed chat: first chunk at the client after the upstream first chunk', value: median(chat), unit: 'ms', note: `p50 of ${chat.length}` },
      { name: 'streamed response: first event at the client after the upstream first chunk', value: median(responses), unit: 'ms', note: `p50 of ${responses.length}` },
      {
        name: 'first event added by responses over chat',
        value: median(added),
        unit: 'ms',
        note: `target ≤ 0.5 ms; median of rounds ${added.map((x) => x.toFixed(3)).join(', ')}`,
      },
    ];
  } finally {
    agent.destroy();
    await sluice.close();
    await upstream.close();
  }
}

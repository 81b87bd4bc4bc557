/**
 * What a key's policy costs a call: Sluice before a zero-latency engine, each in its own
 * process, called with a key that carries a model list, a budget and tags and with a
 * plain key (of another project), both at the same paced rate in rounds taking turns; the
 * figure is the median over rounds of (policy p50 − plain p50) (target ≤ 0.05 ms). One
 * server for both keys: two processes on a shared machine differ by more than the figure.
 */
import type { BenchRow } from './run.js';
import { ADMIN_TOKEN } from '../test/helpers/harness.js';
import { startSluice, startZeroEngine, type SluiceProcess } from './processes.js';
import { load } from './proxy-load.js';

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 7);
const RATE = Number(process.env.BENCH_GOVERNANCE_RATE ?? 300);

const POLICY = { models: ['gpt-oss-*', 'small-*'], budget: { limit_usd: 100_000, window: 'month' }, tags: ['bench', 'team:governance'] };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** A key of a new, well-funded project of `server`, with `policy`. */
async function keyOf(server: SluiceProcess, policy: Record<string, unknown>): Promise<string> {
  const { projectId } = await server.newTenant(100_000);
  const res = await fetch(`${server.baseUrl}/admin/v1/projects/${projectId}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', ...policy }),
  });
  if (res.status !== 200) throw new Error(`key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

export default async function governanceBench(): Promise<BenchRow[]> {
  const engine = await startZeroEngine();
  const yaml = `models:\n  gpt-oss-120b: { backend: openai, base_url: "${engine.baseUrl}" }\n`;
  const env = { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'warn' };
  const server = await startSluice('governance', env, yaml);
  try {
    const sides = [
      { server, key: await keyOf(server, {}) },
      { server, key: await keyOf(server, POLICY) },
    ];
    for (const { server, key } of sides) await load(server.baseUrl, key, { seconds: 2 });
    const added: number[] = [];
    const p50s: number[][] = [[], []];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const p50 = [0, 0];
      for (const i of order) p50[i] = (await load(sides[i]!.server.baseUrl, sides[i]!.key, { seconds: PHASE_SECONDS, rate: RATE, paced: true })).p50;
      p50s[0]!.push(p50[0]!);
      p50s[1]!.push(p50[1]!);
      added.push(p50[1]! - p50[0]!);
    }
    return [
      { name: 'plain key p50', value: median(p50s[0]!), unit: 'ms', note: `${RATE} req/s paced, median of ${ROUNDS} rounds` },
      { name: 'key with models, budget and tags p50', value: median(p50s[1]!), unit: 'ms' },
      { name: 'policy added p50', value: median(added), unit: 'ms', note: 'target ≤ 0.05' },
    ];
  } finally {
    await Promise.all([server.stop(), engine.stop()]);
  }
}

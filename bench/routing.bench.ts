/**
 * What routing across engines costs a call:
 *  (a) the router alone: CPU per call of Router.run() around an attempt that answers at
 *      once, minus calling that attempt directly, with one deployment and with three
 *      (weighted, least_busy) (target ≤ 20 µs);
 *  (b) Sluice at saturation with a model given as `base_url` (one deployment, the
 *      shorthand) against the same engine listed under `deployments` once and three
 *      times, rounds alternating, each as a ratio of the `base_url` figure (target for one
 *      deployment: ≥ 0.97).
 * The `base_url` form runs through the router too, so (a) is what the router adds to
 * any upstream call compared with calling the engine without it.
 */
import type { BenchRow } from './run.js';
import { load, startUpstream } from './proxy.bench.js';
import { loadConfig } from '../src/config/load.js';
import { Router } from '../src/inference/routing/router.js';
import { Metrics, routingMetricsOf } from '../src/observability/metrics.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';
import { tempDir } from '../test/helpers/databases.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const PHASE_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = 200_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function configWith(yaml: string) {
  const dir = tempDir('sluice-routing-bench-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml', DATA_DIR: dir }, dir);
}

/** CPU µs per call of `call`, over CALLS sequential calls. */
async function cpuPerCall(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 10_000; i++) await call();
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await call();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

async function routerCost(strategy: string, deployments: number, withMetrics = false): Promise<number> {
  const list = Array.from({ length: deployments }, (_, i) => `      - { base_url: "http://127.0.0.1:${9000 + i}/v1" }`).join('\n');
  const config = configWith(`routing: { strategy: ${strategy} }\nmodels:\n  m:\n    kind: chat\n    deployments:\n${list}\n`);
  const router = new Router(config, withMetrics ? routingMetricsOf(new Metrics({ processMetrics: false })) : null);
  const model = config.models.m!;
  const call = { requestId: 'bench', signal: new AbortController().signal };
  const answer = { ok: true };
  const attempt = () => Promise.resolve(answer);
  const direct = await cpuPerCall(attempt);
  const routed = await cpuPerCall(() => router.run(model, call, attempt));
  await router.close();
  return routed - direct;
}

export default async function routingBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [strategy, n] of [['weighted', 1], ['weighted', 3], ['least_busy', 3]] as const) {
    rows.push({ name: `router CPU per call, ${n} deployment${n > 1 ? 's' : ''}, ${strategy}`, value: await routerCost(strategy, n), unit: 'µs', note: 'Router.run() minus the attempt alone; target ≤ 20 µs' });
  }
  rows.push({
    name: 'router CPU per call, 3 deployments, weighted, with its Prometheus metrics',
    value: await routerCost('weighted', 3, true),
    unit: 'µs',
    note: 'as the server runs it: attempt counter, in-flight gauge, time-to-first-byte histogram',
  });

  const upstream = await startUpstream();
  const base = `${upstream.url}/v1`;
  const servers: Record<string, TestServer> = {};
  const keys: Record<string, string> = {};
  const forms = {
    base_url: `models:\n  gpt-oss-120b: { backend: openai, base_url: "${base}" }\n`,
    'one deployment': `models:\n  gpt-oss-120b: { backend: openai, deployments: [{ base_url: "${base}" }] }\n`,
    'three deployments': `models:\n  gpt-oss-120b: { backend: openai, deployments: [{ id: a, base_url: "${base}" }, { id: b, base_url: "${base}" }, { id: c, base_url: "${base}" }] }\n`,
  };
  try {
    for (const [form, yaml] of Object.entries(forms)) {
      servers[form] = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' }, yaml });
      keys[form] = (await servers[form].newTenant({ balanceUsd: 100_000 })).key;
      await load(servers[form].baseUrl, keys[form], { seconds: 1 });
    }
    const rps: Record<string, number[]> = { base_url: [], 'one deployment': [], 'three deployments': [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const form of Object.keys(forms)) rps[form]!.push((await load(servers[form]!.baseUrl, keys[form]!, { seconds: PHASE_SECONDS })).rps);
    }
    const baseline = rps.base_url!;
    rows.push({ name: 'sluice at saturation, base_url', value: median(baseline), unit: 'req/s' });
    for (const form of ['one deployment', 'three deployments']) {
      const ratios = rps[form]!.map((r, i) => r / baseline[i]!);
      rows.push({
        name: `sluice at saturation, ${form} / base_url`,
        value: median(ratios),
        unit: 'ratio',
        note: `${form === 'one deployment' ? 'target ≥ 0.97; ' : ''}rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}`,
      });
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.close()));
    await upstream.close();
  }
  return rows;
}

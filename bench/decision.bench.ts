/**
 * The decision route on a random-weight backbone of the real all-MiniLM-L6-v2 size (its
 * config.json and tokenizer from shared/data; skipped when absent), measured in one run:
 * - p50 of one decision request with 16 questions (8 label-mapped choices over IAB
 *   Content 2.2 tier-1 names, 8 zero-shot choices; 8 criteria each; question texts cached
 *   after the first request, the state new every time) in process, against one bare
 *   forward pass of the backbone over a state of the same length: ratio and difference;
 * - requests/s of 32 concurrent HTTP callers ÷ one caller at a time on /v1/systemone.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { BenchRow } from './run.js';
import { closedLoopRate, median, timed } from './measure.js';
import { apiKeyPrincipal, type Caller } from '../src/domain/identity/caller.js';
import type { OnnxBackend } from '../src/inference/backends/onnx/index.js';
import { buildBertEncoderLike } from '../test/fixtures/model-builders/bert.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data/models/all-minilm-l6-v2');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const MODEL = 'zlm-v1-iab-classify-edge';
const WORDS = 'the new phone camera takes sharp photos while the league football season opens with music travel and business news'.split(' ');
const TOPICS = ['Automotive', 'Sports', 'Food & Drink', 'Travel', 'Technology & Computing', 'Music and Audio', 'Business and Finance', 'Shopping'];

const state = (i: number) => `${Array.from({ length: 24 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ')} number ${i}.`;
function questions(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let q = 0; q < 8; q++) {
    out[`label${q}`] = { type: 'choice', criteria: Object.fromEntries(TOPICS.map((t, k) => [TOPICS[(k + q) % 8]!, null])) };
    out[`free${q}`] = { type: 'choice', instructions: `Question ${q}`, criteria: Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`option ${q}-${k}`, `the text is about idea ${q * 8 + k}`])) };
  }
  return out;
}

const freeCaller = (projectId: string): Caller => ({
  principal: apiKeyPrincipal(projectId, null),
  meter: { admit: () => ({ settle: async () => ({ record: null, headers: null }), release: () => undefined }) },
});

async function inProcess(server: TestServer, projectId: string): Promise<BenchRow[]> {
  const { registry } = server.core;
  const decision = server.features.decision.services;
  const backbone = registry.find('all-minilm-l6-v2')!;
  const backend = (await registry.backendFor(registry.find(MODEL)!, 'runTask')) as OnnxBackend;
  const caller = freeCaller(projectId);
  const body = questions();
  let n = 0;
  const decide = () => decision.decide(caller, { model: MODEL, state: state(n++), questions: body }, { requestId: 'bench' });
  const forward = () => backend.embed({ requestId: 'bench', signal: new AbortController().signal, model: backbone, inputs: [state(n++)] });
  for (let i = 0; i < 5; i++) await Promise.all([decide(), forward()]);
  const decideMs: number[] = [];
  const forwardMs: number[] = [];
  // Interleaved, so load changes on the shared machine hit both alike.
  for (let i = 0; i < ROUNDS; i++) {
    forwardMs.push(await timed(forward));
    decideMs.push(await timed(decide));
  }
  const [d, f] = [median(decideMs), median(forwardMs)];
  return [
    { name: 'p50 bare forward pass (1 state)', value: f, unit: 'ms' },
    { name: 'p50 decision, 16 questions × 8 criteria (8 label-mapped, 8 zero-shot)', value: d, unit: 'ms' },
    { name: 'p50 decision ÷ forward pass', value: d / f, unit: 'ratio' },
    { name: 'p50 decision − forward pass', value: d - f, unit: 'ms', note: 'target ≤ 2 ms' },
  ];
}

async function overHttp(server: TestServer, key: string): Promise<BenchRow[]> {
  const pool = new Pool(server.baseUrl, { connections: 40, pipelining: 1 });
  const body = questions();
  let n = 0;
  const post = async () => {
    const res = await pool.request({
      path: '/v1/systemone',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: MODEL, state: state(n++), questions: body }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`/v1/systemone answered ${res.statusCode}: ${text.slice(0, 200)}`);
  };
  try {
    await post();
    const ratios: number[] = [];
    let last = { one: 0, many: 0 };
    for (let round = 0; round < 3; round++) {
      const one = await closedLoopRate(post, 1, SECONDS);
      const many = await closedLoopRate(post, 32, SECONDS);
      ratios.push(many / one);
      last = { one, many };
    }
    return [
      { name: '1 caller at a time', value: last.one, unit: 'req/s', note: 'last round' },
      { name: '32 concurrent callers', value: last.many, unit: 'req/s', note: 'last round' },
      { name: 'throughput 32 callers ÷ 1 caller (median of 3)', value: median(ratios), unit: 'ratio', note: `rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}; target ≥ 1.5` },
    ];
  } finally {
    await pool.close();
  }
}

export default async function run(): Promise<BenchRow[]> {
  if (!existsSync(SOURCE)) return [{ name: 'decision', value: 0, unit: 'skipped', note: `${SOURCE} is absent` }];
  const modelsDir = mkdtempSync(path.join(tmpdir(), 'bench-decision-'));
  let server: TestServer | null = null;
  try {
    buildBertEncoderLike(path.join(modelsDir, 'all-minilm-l6-v2'), SOURCE);
    server = await startTestServer({ env: { MODELS_DIR: modelsDir, RATE_LIMIT_RPM: '100000000' } });
    const { key, projectId } = await server.newTenant({ balanceUsd: 1000 });
    return [...(await inProcess(server, projectId)), ...(await overHttp(server, key))];
  } finally {
    await server?.close();
    rmSync(modelsDir, { recursive: true, force: true });
  }
}

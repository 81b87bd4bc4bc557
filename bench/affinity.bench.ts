/**
 * Session affinity against `least_busy`, in one run, on multi-turn agent sessions:
 * fake engines emulate a prefix cache (each keeps, per session, how much of its
 * conversation it has prefilled; the time to first byte is a fixed cost plus a cost per
 * uncached character, and the answer reports the cached part as
 * `prompt_tokens_details.cached_tokens`). SESSIONS sessions of TURNS turns each (a system
 * prompt and a growing conversation, `prompt_cache_key` set) are replayed over three
 * deployments, CONCURRENCY sessions at a time, against a Sluice routing with `least_busy`
 * and one routing with `least_busy` plus affinity (each with its own, cold, engines).
 * Figures: the share of follow-up turns that reached an engine holding their prefix
 * (target ≥ 90% with affinity), the mean time to first byte of each, and what one pick
 * costs (SessionAffinity.choose over 3 deployments and 10,000 sessions; target ≤ 5 µs).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchRow } from './run.js';
import { startTestServer, type TestServer } from '../test/helpers/harness.js';
import type { Deployment } from '../src/config/routing-config.js';
import { HealthBook } from '../src/inference/routing/deployment-health.js';
import { SessionAffinity } from '../src/inference/routing/affinity.js';
import { LeastBusy } from '../src/inference/routing/strategies.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const TURNS = Number(process.env.BENCH_TURNS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 12);
/** What an engine spends on any request, and per character it must prefill (~4 per token). */
const BASE_MS = 10;
const PREFILL_MS_PER_CHAR = 0.004;
const SYSTEM = 'You are a coding agent. '.repeat(400); // ~9,600 characters: an agent's system prompt and tools
const TURN_TEXT = 'Here is the output of the last tool call. '.repeat(40); // ~1,700 characters a turn

/** Sessions whose prefix an engine keeps (least recently used out first): a KV cache holds a few conversations, not all. */
const CACHED_SESSIONS = 16;

interface Engine {
  baseUrl: string;
  /** Follow-up turns (a session's second and later) that found the whole previous turn cached here, and the others. */
  warm: number;
  cold: number;
  /** Characters prefilled and characters read from the cache. */
  prefilled: number;
  hit: number;
  /** Turns answered, and the sum of their emulated times to first byte (ms). */
  answered: number;
  ttfbMs: number;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible engine with a prefix cache per session (keyed by the session's
 * first user message). `previous`: each session's conversation length at its last turn,
 * wherever that went (the bench's own record, to tell a warm turn from a partly cached one).
 */
async function startCachingEngine(previous: Map<string, number>): Promise<Engine> {
  const cached = new Map<string, number>();
  const engine = { warm: 0, cold: 0, prefilled: 0, hit: 0, answered: 0, ttfbMs: 0 } as Engine;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { messages: Array<{ content: string }> };
      const session = body.messages[1]!.content.slice(0, 64);
      const chars = body.messages.reduce((n, m) => n + m.content.length, 0);
      const hit = Math.min(cached.get(session) ?? 0, chars);
      if (body.messages.length > 2) {
        if (hit > 0 && hit === previous.get(session)) engine.warm++;
        else engine.cold++;
      }
      previous.set(session, chars);
      engine.prefilled += chars - hit;
      engine.hit += hit;
      cached.delete(session);
      cached.set(session, chars);
      if (cached.size > CACHED_SESSIONS) cached.delete(cached.keys().next().value!);
      const delay = BASE_MS + (chars - hit) * PREFILL_MS_PER_CHAR;
      engine.answered++;
      engine.ttfbMs += delay;
      setTimeout(() => {
        const usage = { prompt_tokens: Math.ceil(chars / 4), completion_tokens: 8, total_tokens: Math.ceil(chars / 4) + 8, prompt_tokens_details: { cached_tokens: Math.floor(hit / 4) } };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }], usage }));
      }, delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  engine.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  engine.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return engine;
}

/** Replays every session (CONCURRENCY at a time, each turn after the last): the mean client-side time of a turn, ms. */
async function replay(server: TestServer, key: string): Promise<number> {
  let next = 0;
  let totalMs = 0;
  let turns = 0;
  const session = async (s: number) => {
    const messages = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Session ${s}: fix the failing test in module ${s}.` },
    ];
    for (let t = 0; t < TURNS; t++) {
      const started = performance.now();
      const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'agent-llm', messages, prompt_cache_key: `session-${s}` }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`turn answered ${res.status}`);
      totalMs += performance.now() - started;
      turns++;
      messages.push({ role: 'assistant', content: 'Done.' }, { role: 'user', content: `${TURN_TEXT} (turn ${t})` });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < SESSIONS) await session(next++);
  }));
  return totalMs / turns;
}

async function runMode(affinity: boolean): Promise<{ meanMs: number; engineMs: number; warmShare: number; cachedShare: number }> {
  const previous = new Map<string, number>();
  const engines = await Promise.all([startCachingEngine(previous), startCachingEngine(previous), startCachingEngine(previous)]);
  const yaml = `routing:
  strategy: least_busy
${affinity ? '  affinity: { key: prompt_cache_key }\n' : ''}models:
  agent-llm:
    kind: chat
    deployments:
${engines.map((e, i) => `      - { id: agent-${i}, base_url: "${e.baseUrl}" }`).join('\n')}
`;
  const server = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' }, yaml });
  try {
    const key = (await server.newTenant({ balanceUsd: 100_000 })).key;
    const meanMs = await replay(server, key);
    const warm = engines.reduce((n, e) => n + e.warm, 0);
    const cold = engines.reduce((n, e) => n + e.cold, 0);
    const hit = engines.reduce((n, e) => n + e.hit, 0);
    const prefilled = engines.reduce((n, e) => n + e.prefilled, 0);
    const engineMs = engines.reduce((n, e) => n + e.ttfbMs, 0) / engines.reduce((n, e) => n + e.answered, 0);
    return { meanMs, engineMs, warmShare: warm / (warm + cold), cachedShare: hit / (hit + prefilled) };
  } finally {
    await server.close();
    await Promise.all(engines.map((e) => e.close()));
  }
}

/** The ratio of mean turn times the engines' cost model gives for two cached shares of the same input. */
function predictedRatio(scatteredShare: number, pinnedShare: number): number {
  let chars = 0;
  for (let t = 0; t < TURNS; t++) chars += SYSTEM.length + 60 + t * (TURN_TEXT.length + 15);
  const perTurn = chars / TURNS;
  const time = (share: number) => BASE_MS + (1 - share) * perTurn * PREFILL_MS_PER_CHAR;
  return time(pinnedShare) / time(scatteredShare);
}

/** µs per SessionAffinity.choose() over 3 deployments and 10,000 pinned sessions (hits, the common case). */
function pickCost(): number {
  const deployments: Deployment[] = ['a', 'b', 'c'].map((id) => ({ id, baseUrl: id, upstreamModel: null, apiKey: null, region: null, weight: 1, maxConcurrency: null, timeoutMs: 1 }));
  const health = new HealthBook({ failures: 3, windowMs: 60_000, durationMs: 30_000 }, { cooled: () => {} });
  const affinity = new SessionAffinity('m', deployments, { keys: ['prompt_cache_key'], prefixChars: 2048, loadFactor: 1.25, ttlMs: 3_600_000 }, health, new LeastBusy(health));
  const keys = Array.from({ length: 10_000 }, (_, i) => `0198c7a2-4f1e-7b3c-9d2e-${String(i).padStart(12, '0')}`);
  const candidates = [...deployments];
  const now = Date.now();
  for (const k of keys) affinity.choose(k, candidates, 3, now);
  const picks = 2_000_000;
  const started = performance.now();
  for (let i = 0; i < picks; i++) affinity.choose(keys[i % keys.length]!, candidates, 3, now);
  return ((performance.now() - started) * 1000) / picks;
}

export default async function affinityBench(): Promise<BenchRow[]> {
  const scattered = await runMode(false);
  const pinned = await runMode(true);
  const coldMs = BASE_MS + (SYSTEM.length + 60) * PREFILL_MS_PER_CHAR;
  return [
    { name: 'follow-up turns reaching a warm engine, least_busy', value: scattered.warmShare * 100, unit: '%' },
    { name: 'follow-up turns reaching a warm engine, affinity', value: pinned.warmShare * 100, unit: '%', note: 'target ≥ 90%' },
    { name: 'mean engine time to first byte, least_busy', value: scattered.engineMs, unit: 'ms', note: 'the engines\' emulated prefill: fixed cost + uncached characters' },
    { name: 'mean engine time to first byte, affinity', value: pinned.engineMs, unit: 'ms' },
    {
      name: 'affinity / least_busy, mean engine time to first byte',
      value: pinned.engineMs / scattered.engineMs,
      unit: 'ratio',
      note: `the prefill model predicts ${predictedRatio(scattered.cachedShare, pinned.cachedShare).toFixed(3)} from the cached shares`,
    },
    { name: 'mean time of a turn at the client, least_busy', value: scattered.meanMs, unit: 'ms', note: 'with Sluice\'s own time for 10–30 kB bodies on a shared machine' },
    { name: 'mean time of a turn at the client, affinity', value: pinned.meanMs, unit: 'ms', note: `${SESSIONS} sessions × ${TURNS} turns, ${CONCURRENCY} at a time, 3 engines; a cold first turn prefills ≈ ${coldMs.toFixed(0)} ms` },
    { name: 'input read from the cache, least_busy', value: scattered.cachedShare * 100, unit: '%' },
    { name: 'input read from the cache, affinity', value: pinned.cachedShare * 100, unit: '%' },
    { name: 'affinity / least_busy, mean time of a turn at the client', value: pinned.meanMs / scattered.meanMs, unit: 'ratio' },
    { name: 'one affinity pick (SessionAffinity.choose, a pinned session)', value: pickCost(), unit: 'µs', note: 'target ≤ 5 µs' },
  ];
}

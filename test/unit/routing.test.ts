/**
 * Routing pieces on their own: the config's refusals (with the path), upstream bindings
 * (`upstream: {protocol, deployments}`, the older spellings, an unknown protocol refused at
 * start-up), smooth weighted round robin, cooldowns and the probe back in.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { Deployment } from '../../src/config/routing-config.js';
import { HealthBook } from '../../src/inference/routing/deployment-health.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { UPSTREAM_PROTOCOLS } from '../../src/inference/upstream/protocols.js';
import { toyProtocol } from '../helpers/toy-protocol.js';
import { LeastBusy, LowestLatency, SmoothWeighted } from '../../src/inference/routing/strategies.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string, env: Record<string, string> = {}) {
  const dir = tempDir('sluice-routing-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ ...env, SLUICE_CONFIG: 'sluice.yaml' }, dir);
}

function problemsOf(yaml: string, env: Record<string, string> = {}): string[] {
  try {
    load(yaml, env);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

const A = 'http://127.0.0.1:9001/v1';
const B = 'http://127.0.0.1:9002/v1';

describe('routing config', () => {
  it('reads the YAML of the README: deployments, weights, keys, fallbacks and the routing section', () => {
    const config = load(
      `models:
  my-llm:
    kind: chat
    deployments:
      - { base_url: ${A}/, upstream_model: qwen3-30b, weight: 3 }
      - { base_url: ${B}, upstream_model: qwen3-30b, weight: 1, api_key_env: GPU_B_KEY, max_concurrency: 64 }
    fallbacks: [my-small-llm]
    context_window_fallbacks: [my-long-llm]
  my-small-llm: { kind: chat, base_url: ${A} }
  my-long-llm: { kind: chat, base_url: ${B} }
routing:
  strategy: least_busy
  retries: 1
  cooldown: { failures: 5, window_seconds: 10, seconds: 20 }
`,
      { GPU_B_KEY: 'secret-b' },
    );
    const model = config.models['my-llm']!;
    expect(model.binding.deployments).toEqual([
      { id: 'my-llm#1', baseUrl: A, region: null, upstreamModel: 'qwen3-30b', apiKey: null, weight: 3, maxConcurrency: null, timeoutMs: 600_000 },
      { id: 'my-llm#2', baseUrl: B, region: null, upstreamModel: 'qwen3-30b', apiKey: 'secret-b', weight: 1, maxConcurrency: 64, timeoutMs: 600_000 },
    ]);
    expect(model.fallbacks).toEqual(['my-small-llm']);
    expect(model.contextWindowFallbacks).toEqual(['my-long-llm']);
    expect(config.models['my-small-llm']!.binding.deployments.map((d) => d.id)).toEqual(['my-small-llm']);
    expect(config.routing).toEqual({
      strategy: 'least_busy',
      retries: 1,
      cooldown: { failures: 5, windowMs: 10_000, durationMs: 20_000 },
      queueTimeoutMs: 2_000,
      redisPrefix: 'sluice:routing',
      affinity: null,
    });
  });

  it('has defaults without a routing section', () => {
    expect(load(`models:\n  m: { kind: chat, base_url: ${A} }\n`).routing).toMatchObject({ strategy: 'weighted', retries: 2, cooldown: { failures: 3, windowMs: 60_000, durationMs: 30_000 } });
  });

  it.each([
    ['a strategy it does not know', 'routing: { strategy: random }\n', 'routing.strategy: '],
    ['negative retries', 'routing: { retries: -1 }\n', 'routing.retries: Expected integer to be greater or equal to 0'],
    ['a zero weight', `models:\n  m: { kind: chat, deployments: [{ base_url: ${A}, weight: 0 }] }\n`, 'models.m.deployments.0.weight: Expected integer to be greater or equal to 1'],
    ['both base_url and deployments', `models:\n  m: { kind: chat, base_url: ${A}, deployments: [{ base_url: ${B} }] }\n`, 'models.m.deployments: give either base_url (one engine) or deployments, not both'],
    ['an unknown fallback', `models:\n  m: { kind: chat, base_url: ${A}, fallbacks: [nope] }\n`, 'models.m.fallbacks[0]: unknown model id nope'],
    ['a fallback to itself', `models:\n  m: { kind: chat, base_url: ${A}, fallbacks: [m] }\n`, 'models.m.fallbacks[0]: a model cannot fall back to itself'],
    [
      'a fallback of another kind',
      `models:\n  m: { kind: chat, base_url: ${A}, context_window_fallbacks: [e] }\n  e: { kind: embeddings, base_url: ${B} }\n`,
      'models.m.context_window_fallbacks[0]: e is a embeddings model, m a chat model',
    ],
    [
      'one deployment id for two models',
      `models:\n  m: { kind: chat, deployments: [{ id: gpu, base_url: ${A} }] }\n  n: { kind: chat, deployments: [{ id: gpu, base_url: ${B} }] }\n`,
      'models.n.deployments: the deployment id gpu is also used by models.m',
    ],
    ['an unset key', `models:\n  m: { kind: chat, deployments: [{ base_url: ${A}, api_key_env: SLUICE_TEST_UNSET }] }\n`, 'models.m.deployments[0].api_key_env: environment variable SLUICE_TEST_UNSET is not set'],
  ])('refuses %s, naming the path', (_what, yaml, problem) => {
    const problems = problemsOf(yaml);
    expect(problems.some((p) => p.startsWith(problem))).toBe(true);
  });
});

describe('upstream bindings', () => {
  it('reads upstream: {protocol, deployments} as the model deployments under that protocol', () => {
    const config = load(`models:\n  m:\n    kind: chat\n    upstream:\n      protocol: toy\n      deployments: [{ id: a, base_url: ${A} }, { id: b, base_url: ${B}, weight: 3 }]\n`);
    const binding = config.models.m!.binding;
    expect(binding.backend).toBe('upstream');
    expect(binding.upstream?.protocol).toBe('toy');
    expect(binding.upstream?.deployments.map((d) => [d.id, d.weight])).toEqual([['a', 1], ['b', 3]]);
    expect(binding.deployments).toBe(binding.upstream?.deployments);
    expect(binding.baseUrl).toBe(A);
  });

  it.each([
    ['base_url', `models:\n  m: { kind: chat, base_url: ${A} }\n`],
    ['deployments', `models:\n  m: { kind: chat, deployments: [{ base_url: ${A} }] }\n`],
    ['backend: openai', `models:\n  gpt-oss-120b: { backend: openai, base_url: ${A} }\n`],
    ['upstream without a protocol', `models:\n  m: { kind: chat, upstream: { deployments: [{ base_url: ${A} }] } }\n`],
  ])('binds %s to an upstream speaking the default protocol', (_what, yaml) => {
    const model = Object.values(load(yaml).models).find((m) => m.binding.baseUrl === A)!;
    expect(model.binding).toMatchObject({ backend: 'upstream', upstream: { protocol: 'openai' } });
  });

  it('leaves in-process models unbound to any upstream, and catalog upstream models bound to one with no engine', () => {
    const config = load('');
    const inProcess = Object.values(config.models).find((m) => m.binding.backend === 'onnx')!;
    expect(inProcess.binding.upstream).toBeNull();
    expect(config.models['deepseek-v4-flash']!.binding.upstream).toEqual({ protocol: 'openai', deployments: [] });
  });

  it.each([
    ['engines given twice', `models:\n  m: { kind: chat, base_url: ${B}, upstream: { deployments: [{ base_url: ${A} }] } }\n`, 'models.m.upstream.deployments: give the engines once'],
    ['a protocol backend contradicts', `models:\n  gpt-oss-120b: { backend: openai, base_url: ${A}, upstream: { protocol: toy } }\n`, 'models.gpt-oss-120b.upstream.protocol: toy, but backend says openai'],
    ['an upstream without engines', 'models:\n  m: { kind: chat, upstream: { protocol: toy } }\n', 'models.m.base_url: required'],
  ])('refuses %s, naming the path', (_what, yaml, problem) => {
    expect(problemsOf(yaml).some((p) => p.startsWith(problem))).toBe(true);
  });

  it('refuses at start-up a protocol this build does not speak, naming the ones it does', () => {
    const config = load(`models:\n  m: { kind: chat, upstream: { protocol: toy, deployments: [{ base_url: ${A} }] } }\n`);
    expect(() => new ModelRegistry(config, pino({ level: 'silent' }))).toThrow('models.m.upstream.protocol: unknown protocol toy (known protocols: openai, azure, anthropic, bedrock)');
    expect(() => new ModelRegistry(config, pino({ level: 'silent' }), { protocols: [...UPSTREAM_PROTOCOLS, toyProtocol] })).not.toThrow();
  });
});

const deployment = (id: string, weight = 1): Deployment => ({ id, baseUrl: A, region: null, upstreamModel: null, apiKey: null, weight, maxConcurrency: null, timeoutMs: 1000 });

describe('smooth weighted round robin', () => {
  it('spreads 3:1 as a a b a, not a a a b, and keeps the shares exactly', () => {
    const picker = new SmoothWeighted();
    const all = [deployment('a', 3), deployment('b', 1)];
    const picks = Array.from({ length: 8 }, () => picker.pick(all, 2).id);
    expect(picks).toEqual(['a', 'a', 'b', 'a', 'a', 'a', 'b', 'a']);
  });
});

describe('cooldowns', () => {
  const policy = { failures: 3, windowMs: 60_000, durationMs: 30_000 };

  it('takes a deployment out after `failures` failures in the window, then lets one call probe it back in', () => {
    let now = 1_000_000;
    const cooled: number[] = [];
    const book = new HealthBook(policy, { cooled: (_d, until) => cooled.push(until) }, () => now);
    const d = deployment('d');
    expect([book.failed(d, 'ECONNREFUSED'), book.failed(d, 'ECONNREFUSED'), book.failed(d, 'ECONNREFUSED')]).toEqual([false, false, true]);
    expect(cooled).toEqual([now + 30_000]);
    expect(book.available(d, now + 29_999)).toBe(false);
    now += 30_000;
    expect(book.available(d, now)).toBe(true);
    book.startAttempt(d);
    // While the probe is out, no other call goes there.
    expect(book.available(d, now)).toBe(false);
    // The probe fails: straight back out, without three new failures.
    expect(book.failed(d, 'ECONNREFUSED')).toBe(true);
    book.endAttempt(d);
    expect(book.available(d, now + 1)).toBe(false);
    now += 30_000;
    book.startAttempt(d);
    book.succeeded(d, 12);
    book.endAttempt(d);
    expect(book.available(d, now)).toBe(true);
    expect(book.of(d).unreachableSinceMs).toBeNull();
  });

  it('forgets failures older than the window', () => {
    let now = 0;
    const book = new HealthBook(policy, { cooled: () => {} }, () => now);
    const d = deployment('d');
    book.failed(d, null);
    book.failed(d, null);
    now += 60_001;
    expect(book.failed(d, null)).toBe(false);
  });
});

describe('least_busy and latency', () => {
  const policy = { failures: 3, windowMs: 60_000, durationMs: 30_000 };

  /** `count` calls that nothing answers yet: the deployment each went to. */
  function burst(book: HealthBook, picker: LeastBusy, candidates: Deployment[], count: number): string[] {
    return Array.from({ length: count }, () => {
      const d = picker.pick(candidates, candidates.length);
      book.startAttempt(d);
      return d.id;
    });
  }

  it('least_busy takes the fewest calls in flight, here and on other replicas, per unit of weight', () => {
    const book = new HealthBook(policy, { cooled: () => {} });
    const picker = new LeastBusy(book);
    const [a, b] = [deployment('a', 1), deployment('b', 2)];
    book.startAttempt(a);
    expect(picker.pick([a, b], 2).id).toBe('b');
    book.of(b).remoteInFlight = 3;
    // b: 3 calls at weight 2 (1.5 each) against a: 1 call at weight 1.
    expect(picker.pick([a, b], 2).id).toBe('a');
  });

  it('least_busy weighs each count by the time to first byte once every deployment has answered', () => {
    const book = new HealthBook(policy, { cooled: () => {} });
    const picker = new LeastBusy(book);
    const [fast, slow, fresh] = [deployment('fast'), deployment('slow'), deployment('fresh')];
    book.succeeded(fast, 5);
    book.succeeded(slow, 198);
    // A burst that nothing answers yet: by counts alone it would alternate. Weighed, a call
    // on the slow one waits 198 ms, less than the fast one's 40th (40 × 5 ms): it takes call 40.
    const picks = burst(book, picker, [slow, fast], 80);
    expect(picks.indexOf('slow')).toBe(39);
    expect(picks.filter((id) => id === 'slow')).toHaveLength(1);
    // A deployment not yet timed: counts alone decide, so it is tried (it has no calls).
    expect(picker.pick([slow, fast, fresh], 3).id).toBe('fresh');
  });

  it('least_busy stops weighing by a time to first byte older than 10 s, so a once-slow deployment is timed again', () => {
    let now = 1_000_000;
    const book = new HealthBook(policy, { cooled: () => {} }, () => now);
    const picker = new LeastBusy(book);
    const [fast, slow] = [deployment('fast'), deployment('slow')];
    book.succeeded(slow, 30_000);
    book.succeeded(fast, 5);
    book.startAttempt(fast);
    // One call on the fast one (10 ms expected) still beats the slow one's 30 s.
    expect(picker.pick([slow, fast], 2).id).toBe('fast');
    now += 9_000;
    book.succeeded(fast, 5);
    now += 2_000;
    // The slow one's time is 11 s old: counts alone, and it has none in flight.
    expect(picker.pick([slow, fast], 2).id).toBe('slow');
  });

  it('least_busy weighs by the quickest answer of the last 5–10 s, not by answers slowed by queueing', () => {
    let now = 1_000_000;
    const book = new HealthBook(policy, { cooled: () => {} }, () => now);
    const picker = new LeastBusy(book);
    const [fast, slow] = [deployment('fast'), deployment('slow')];
    book.succeeded(slow, 198);
    book.succeeded(fast, 5);
    // A burst's answers queued behind each other: the average climbs to 80 ms or more.
    for (let i = 0; i < 10; i++) book.succeeded(fast, 100);
    expect(book.of(fast).ttfbMs).toBeGreaterThan(80);
    // Still weighed at 5 ms: the slow one's 198 ms is less than the fast one's 40th call (40 × 5 ms).
    const picks = burst(book, picker, [slow, fast], 40);
    expect(picks.indexOf('slow')).toBe(39);
    // It got slower for good: once 5 s and then 5 s more of answers are 100 ms, that is its time.
    for (const d of [fast, slow]) while (book.of(d).inFlight > 0) book.endAttempt(d);
    now += 5_000;
    book.succeeded(fast, 100);
    book.succeeded(slow, 200);
    expect(picker.pick([slow, fast], 2).id).toBe('fast');
    // The previous window's 5 ms still counts: a call there waits (1 + 1) × 5 ms.
    book.startAttempt(fast);
    expect(picker.pick([slow, fast], 2).id).toBe('fast');
    book.endAttempt(fast);
    now += 5_000;
    book.succeeded(fast, 100);
    book.succeeded(slow, 200);
    // Now 100 ms: with two calls on it, a third waits 3 × 100 ms, longer than the slow one's 200.
    book.startAttempt(fast);
    book.startAttempt(fast);
    expect(picker.pick([slow, fast], 2).id).toBe('slow');
  });

  it('latency tries a deployment never measured first, then the fastest, exploring one call in ten', () => {
    const book = new HealthBook(policy, { cooled: () => {} });
    const picker = new LowestLatency(book);
    const [fast, slow] = [deployment('fast'), deployment('slow')];
    book.succeeded(slow, 200);
    expect(picker.pick([slow, fast], 2).id).toBe('fast');
    book.succeeded(fast, 5);
    const picks = Array.from({ length: 100 }, () => picker.pick([slow, fast], 2).id);
    const toFast = picks.filter((id) => id === 'fast').length;
    expect(toFast).toBeGreaterThanOrEqual(90);
  });
});

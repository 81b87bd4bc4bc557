/**
 * Session affinity on its own (src/inference/routing/affinity.ts): the config, the session
 * key a call carries, the ring's spread by weight, and a session's turns pinned to one
 * deployment until it cools down, fills up, goes over its load bound or leaves the
 * configuration, each move counted with its reason.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { Deployment } from '../../src/config/routing-config.js';
import type { AffinitySettings } from '../../src/domain/models/model-spec.types.js';
import type { AffinityOutcome } from '../../src/domain/models/routing-metrics.port.js';
import { HealthBook } from '../../src/inference/routing/deployment-health.js';
import { HashRing, SessionAffinity, pointOf, sessionKeyOf } from '../../src/inference/routing/affinity.js';
import { SmoothWeighted } from '../../src/inference/routing/strategies.js';
import { tempDir } from '../helpers/databases.js';

const A = 'http://127.0.0.1:9001/v1';
const B = 'http://127.0.0.1:9002/v1';

function load(yaml: string) {
  const dir = tempDir('sluice-affinity-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml' }, dir);
}

function problemsOf(yaml: string): string[] {
  try {
    load(yaml);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

const deployment = (id: string, weight = 1, maxConcurrency: number | null = null): Deployment => ({
  id,
  baseUrl: `http://${id}`,
  upstreamModel: null,
  apiKey: null,
  region: null,
  weight,
  maxConcurrency,
  timeoutMs: 1000,
});

const SETTINGS: AffinitySettings = { keys: ['prompt_cache_key'], prefixChars: 2048, loadFactor: 1.25, ttlMs: 60_000 };

function setup(deployments: Deployment[], settings = SETTINGS) {
  let nowMs = 1_000_000;
  const health = new HealthBook({ failures: 1, windowMs: 60_000, durationMs: 30_000 }, { cooled: () => {} }, () => nowMs);
  const outcomes: AffinityOutcome[] = [];
  const affinity = new SessionAffinity('m', deployments, settings, health, new SmoothWeighted(), null, { affinity: (o) => outcomes.push(o) });
  /** One turn of `key` among the deployments that may take a call (all but `excluded`). */
  const turn = (key: string, excluded: Deployment[] = []) => {
    const candidates = deployments.filter((d) => !excluded.includes(d) && health.available(d, nowMs));
    return affinity.choose(key, candidates, candidates.length, nowMs).id;
  };
  return { affinity, health, outcomes, turn, advance: (ms: number) => (nowMs += ms) };
}

describe('affinity config', () => {
  it('reads routing.affinity and a model override; off unless set', () => {
    const config = load(`routing:
  affinity: { key: [prompt_cache_key, session_header, prefix], prefix_chars: 4096, load_factor: 1.5, ttl_seconds: 600 }
models:
  m: { kind: chat, deployments: [{ base_url: ${A} }, { base_url: ${B} }] }
  n: { kind: chat, base_url: ${A}, affinity: false }
  o: { kind: chat, base_url: ${B}, affinity: { key: user } }
`);
    expect(config.routing.affinity).toEqual({ keys: ['prompt_cache_key', 'session_header', 'prefix'], prefixChars: 4096, loadFactor: 1.5, ttlMs: 600_000 });
    expect(config.models.m!.affinity).toBeUndefined();
    expect(config.models.n!.affinity).toBeNull();
    expect(config.models.o!.affinity).toEqual({ keys: ['user'], prefixChars: 2048, loadFactor: 1.25, ttlMs: 3_600_000 });
    expect(load(`models:\n  m: { kind: chat, base_url: ${A} }\n`).routing.affinity).toBeNull();
  });

  it.each([
    ['an unknown key', 'routing: { affinity: { key: cookie } }\n', 'routing.affinity.key'],
    ['a load factor below 1', 'routing: { affinity: { key: user, load_factor: 0.5 } }\n', 'routing.affinity.load_factor: Expected number to be greater or equal to 1'],
    ['no key', 'routing: { affinity: { prefix_chars: 100 } }\n', 'routing.affinity'],
  ])('refuses %s, naming the path', (_what, yaml, problem) => {
    expect(problemsOf(yaml).some((p) => p.startsWith(problem))).toBe(true);
  });
});

describe('the session key', () => {
  const settings = (keys: AffinitySettings['keys'], prefixChars = 16): AffinitySettings => ({ ...SETTINGS, keys, prefixChars });
  const call = { requestId: 'r', signal: new AbortController().signal };

  it('is the first of the keys the call carries', () => {
    const hints = { session: 'claude-session', user: 'u-1', chain: 'msg_root' };
    expect(sessionKeyOf(settings(['prompt_cache_key', 'session_header', 'user']), { ...call, affinity: hints })).toBe('claude-session');
    expect(sessionKeyOf(settings(['previous_response', 'user']), { ...call, affinity: hints })).toBe('msg_root');
    expect(sessionKeyOf(settings(['prompt_cache_key']), { ...call, affinity: hints })).toBeNull();
    expect(sessionKeyOf(settings(['user']), call)).toBeNull();
  });

  it('prefix: the same for prompts that share their first N characters, different otherwise', () => {
    const prefix = settings(['prefix'], 40);
    const system = { role: 'system' as const, content: 'You are a coding agent working in a repo.' };
    const turn1 = sessionKeyOf(prefix, { ...call, messages: [system, { role: 'user', content: 'fix the bug' }] });
    const turn2 = sessionKeyOf(prefix, { ...call, messages: [system, { role: 'user', content: 'fix the bug' }, { role: 'assistant', content: 'done' }] });
    const other = sessionKeyOf(prefix, { ...call, messages: [{ role: 'system', content: 'You are a translator working on a book.' }] });
    expect(turn1).toMatch(/^~[0-9a-z]+$/);
    expect(turn2).toBe(turn1);
    expect(other).not.toBe(turn1);
    expect(sessionKeyOf(prefix, call)).toBeNull();
  });
});

describe('the ring', () => {
  it('spreads keys in proportion to weight', () => {
    const deployments = [deployment('a', 1), deployment('b', 3)];
    const ring = new HashRing(deployments);
    const counts = [0, 0];
    for (let i = 0; i < 20_000; i++) counts[ring.owners[ring.start(pointOf(`session-${i}`))]!]!++;
    expect(counts[1]! / 20_000).toBeGreaterThan(0.7);
    expect(counts[1]! / 20_000).toBeLessThan(0.8);
  });
});

describe('pinned sessions', () => {
  const three = () => [deployment('a'), deployment('b'), deployment('c')];

  it('sends every turn of a session to the deployment of its first, and spreads sessions', () => {
    const { turn, outcomes } = setup(three());
    const placed = new Map<string, string>();
    for (let s = 0; s < 30; s++) placed.set(`s${s}`, turn(`s${s}`));
    for (let t = 0; t < 3; t++) for (const [key, d] of placed) expect(turn(key)).toBe(d);
    expect(new Set(placed.values()).size).toBe(3);
    expect(outcomes.filter((o) => o === 'new')).toHaveLength(30);
    expect(outcomes.filter((o) => o === 'hit')).toHaveLength(90);
  });

  it('moves a session whose deployment cooled down, and keeps it where it moved', () => {
    const deployments = three();
    const { turn, outcomes, health } = setup(deployments);
    const first = turn('s');
    const pinned = deployments.find((d) => d.id === first)!;
    health.failed(pinned, null);
    const moved = turn('s');
    expect(moved).not.toBe(first);
    expect(outcomes.at(-1)).toBe('moved_cooled');
    expect(turn('s')).toBe(moved);
    expect(outcomes.at(-1)).toBe('hit');
  });

  it('moves a session whose deployment is at its max_concurrency', () => {
    const deployments = three();
    const { turn, outcomes } = setup(deployments);
    const first = deployments.find((d) => d.id === turn('s'))!;
    expect(turn('s', [first])).not.toBe(first.id);
    expect(outcomes.at(-1)).toBe('moved_full');
  });

  it('moves a session whose deployment is over its load bound, and not before', () => {
    const deployments = three();
    const { turn, outcomes, health } = setup(deployments);
    const first = deployments.find((d) => d.id === turn('s'))!;
    // 12 calls in flight in all, all on its deployment: its bound is ⌈1.25 × 13 ÷ 3⌉ = 6.
    health.of(first).inFlight = 5;
    health.of(deployments.find((d) => d !== first)!).inFlight = 7;
    expect(turn('s')).toBe(first.id);
    health.of(first).inFlight = 6;
    health.of(deployments.find((d) => d !== first)!).inFlight = 6;
    expect(turn('s')).not.toBe(first.id);
    expect(outcomes.slice(-2)).toEqual(['hit', 'moved_overloaded']);
  });

  it('keeps a session with a handful of calls in flight whatever the others carry', () => {
    const deployments = three();
    const { turn, health } = setup(deployments);
    const first = deployments.find((d) => d.id === turn('s'))!;
    health.of(first).inFlight = 3;
    expect(turn('s')).toBe(first.id);
  });

  it('places a session another replica moved where it says, and forgets pins when they expire', () => {
    const deployments = three();
    const { affinity, turn, outcomes, advance } = setup(deployments);
    const first = turn('s');
    const other = deployments.find((d) => d.id !== first)!;
    affinity.adopt('s', other.id, 1_000_000);
    expect(turn('s')).toBe(other.id);
    advance(61_000);
    expect(turn('s')).toBe(first);
    expect(outcomes.at(-1)).toBe('new');
  });
});

/**
 * Session affinity: the turns of one session (an agent's conversation) go to the
 * deployment that served its last turn, whose prefix cache holds the conversation so far,
 * while that deployment is healthy and under its load bound.
 *
 * A new session is placed by consistent hashing with bounded loads (Mirrokni, Thorup and
 * Zadimoghaddam, "Consistent Hashing with Bounded Loads", 2018): its key's point on a ring
 * of virtual nodes (as many per deployment as its weight's share), then clockwise to the
 * first deployment that may take a call and whose calls in flight (this replica's and,
 * with Redis, the others') stay under `load_factor` × its weighted share of all calls in
 * flight plus this one (and at least MIN_BOUND). Every replica computes the same ring, so without any shared state
 * a new session lands on the same deployment whichever replica it reaches.
 *
 * The placement is then pinned (in memory, bounded, expiring `ttl_seconds` after the last
 * turn; and written through to Redis, shared.ts, so a session that moved is found by every
 * replica). A later turn goes to the pinned deployment unless it is cooling down (or
 * being probed back in), at its `max_concurrency`, over its load bound, or gone from the
 * configuration: then the model's strategy picks, and the session moves with a new pin.
 *
 * Hand-written: the ring is a sorted array searched by bisection (some forty lines); the
 * libraries for it (hashring, consistent-hashing) have no bounded-load walk and allocate
 * per lookup.
 */
import type { Deployment } from '../../config/schema.js';
import type { AffinitySettings } from '../../domain/models/model-spec.types.js';
import type { AffinityOutcome, RoutingMetrics } from '../../domain/models/routing-metrics.port.js';
import type { CallContext, ChatMessage } from '../../domain/models/inference-backend.port.js';
import type { HealthBook } from './deployment-health.js';
import type { Picker } from './strategies.js';

/** What the router hands the affinity of a call: its context, and its prompt where it has one. */
export type AffineCall = CallContext & { messages?: readonly ChatMessage[]; promptText?: string };

/** The other replicas' word on pins (shared-state.ts); absent without Redis. */
export interface SharedPins {
  /**
   * Claims `key` for `deployment` unless another replica pinned it already, in which case
   * `adopt` hears the deployment it names; `moved` overwrites. Fire and forget.
   */
  pin(model: string, key: string, deployment: string, ttlMs: number, moved: boolean, adopt: (deployment: string) => void): void;
  /** Keeps a pin alive (a session's later turn). */
  touch(model: string, key: string, ttlMs: number): void;
}

/** Virtual nodes on the ring per deployment of average weight (enough for an even spread over a few deployments). */
const NODES_PER_DEPLOYMENT = 160;
const MAX_NODES = 16_384;
/**
 * Below this many calls in flight a deployment keeps its sessions whatever the others
 * carry: with a handful of calls in all, the bound alone (1.25 × 2 calls ÷ 3 deployments
 * rounds up to 1) would move a session off a warm engine for one call, a cold prefill
 * that costs more than the queueing it saves.
 */
const MIN_BOUND = 4;
/** Pins kept in memory per model; the oldest go first beyond this. */
const MAX_PINS = 100_000;

interface Pin {
  deployment: Deployment;
  expiresAtMs: number;
  /** When the shared copy was last written or refreshed. */
  sharedAtMs: number;
}

/** FNV-1a over a string's UTF-16 units from `from` to `to`, continuing `seed`. */
function fnv1a(text: string, seed: number, to = text.length): number {
  let h = seed;
  for (let i = 0; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** MurmurHash3's finaliser: spreads FNV's low-entropy high bits over the whole word. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const FNV_SEED = 0x811c9dc5;

export const pointOf = (key: string): number => mix(fnv1a(key, FNV_SEED));

/** A hash of the prompt's first `chars` characters (roles and contents), as a key; null when there is no prompt. */
export function prefixKeyOf(call: AffineCall, chars: number): string | null {
  let h1 = FNV_SEED;
  let h2 = 0x9747b28c;
  let left = chars;
  const step = (text: string) => {
    const n = Math.min(left, text.length);
    h1 = fnv1a(text, h1, n);
    h2 = fnv1a(text, h2 ^ 0x5bd1e995, n);
    left -= n;
  };
  if (call.messages) {
    for (const m of call.messages) {
      if (left <= 0) break;
      step(m.role);
      step(m.content);
    }
  } else if (call.promptText !== undefined) step(call.promptText);
  else return null;
  return `~${mix(h1).toString(36)}${mix(h2).toString(36)}`;
}

/** The key of a call's session under `settings`: the first of its keys the call carries; null when none. */
export function sessionKeyOf(settings: AffinitySettings, call: AffineCall): string | null {
  const hints = call.affinity;
  for (const kind of settings.keys) {
    let key: string | null | undefined;
    if (kind === 'prefix') key = prefixKeyOf(call, settings.prefixChars);
    else if (hints === undefined) continue;
    else if (kind === 'prompt_cache_key') key = hints.promptCacheKey;
    else if (kind === 'session_header') key = hints.session;
    else if (kind === 'previous_response') key = hints.chain;
    else key = hints.user;
    if (key) return key;
  }
  return null;
}

/** The ring: points sorted ascending, each with the index of the deployment that owns it. */
export class HashRing {
  readonly points: Uint32Array;
  readonly owners: Uint16Array;

  constructor(deployments: readonly Deployment[]) {
    const totalWeight = deployments.reduce((n, d) => n + d.weight, 0);
    const budget = Math.min(MAX_NODES, NODES_PER_DEPLOYMENT * deployments.length);
    const nodes: Array<[number, number]> = [];
    deployments.forEach((d, index) => {
      const count = Math.max(1, Math.round((budget * d.weight) / totalWeight));
      for (let k = 0; k < count; k++) nodes.push([pointOf(`${d.id}#${k}`), index]);
    });
    nodes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.points = Uint32Array.from(nodes, (n) => n[0]);
    this.owners = Uint16Array.from(nodes, (n) => n[1]);
  }

  /** The index of the first point at or after `point` (wrapping to 0). */
  start(point: number): number {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.points[mid]! < point) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.points.length ? 0 : lo;
  }
}

export class SessionAffinity {
  readonly #ring: HashRing;
  readonly #pins = new Map<string, Pin>();
  readonly #byId: Map<string, Deployment>;
  readonly #totalWeight: number;
  /** Deployments already looked at in one ring walk (reused; the pick allocates nothing). */
  readonly #seen: Uint8Array;

  constructor(
    private readonly model: string,
    private readonly deployments: readonly Deployment[],
    readonly settings: AffinitySettings,
    private readonly health: HealthBook,
    private readonly picker: Picker,
    private readonly shared: SharedPins | null = null,
    private readonly metrics: Pick<RoutingMetrics, 'affinity'> | null = null,
  ) {
    this.#ring = new HashRing(deployments);
    this.#byId = new Map(deployments.map((d) => [d.id, d]));
    this.#totalWeight = deployments.reduce((n, d) => n + d.weight, 0);
    this.#seen = new Uint8Array(deployments.length);
  }

  /** The session key of `call`, or null when it carries none of the model's keys. */
  keyOf(call: AffineCall): string | null {
    return sessionKeyOf(this.settings, call);
  }

  /**
   * The deployment for the session `key` among `candidates[0..count)` (the router's: may
   * take a call now, never empty), pinning the session there.
   */
  choose(key: string, candidates: Deployment[], count: number, nowMs: number): Deployment {
    const pin = this.#pins.get(key);
    if (pin !== undefined && pin.expiresAtMs > nowMs) {
      const reason = this.#keeps(pin.deployment, candidates, count);
      if (reason === null) return this.#hit(key, pin, nowMs);
      const moved = this.#elsewhere(pin.deployment, candidates, count);
      this.#pin(key, moved, nowMs, true);
      this.metrics?.affinity(reason);
      return moved;
    }
    const placed = this.#walk(pointOf(key), candidates, count) ?? this.picker.pick(candidates, count);
    this.#pin(key, placed, nowMs, false);
    this.metrics?.affinity('new');
    return placed;
  }

  /** The session's turn was served by `deployment` after its pinned one failed (a retry): the session moves there. */
  servedElsewhere(key: string, deployment: Deployment, nowMs: number): void {
    const pin = this.#pins.get(key);
    if (pin !== undefined && pin.deployment === deployment) return;
    this.#pin(key, deployment, nowMs, true);
    this.metrics?.affinity('moved_failed');
  }

  /** Another replica moved the session `key` to `deployment` (announced through Redis): its next turn goes there. */
  adopt(key: string, deployment: string, nowMs: number): void {
    const d = this.#byId.get(deployment);
    if (d === undefined) return;
    this.#pins.delete(key);
    if (this.#pins.size >= MAX_PINS) this.#pins.delete(this.#pins.keys().next().value!);
    this.#pins.set(key, { deployment: d, expiresAtMs: nowMs + this.settings.ttlMs, sharedAtMs: nowMs });
  }

  /** Pins known in memory (status, tests). */
  get size(): number {
    return this.#pins.size;
  }

  #hit(key: string, pin: Pin, nowMs: number): Deployment {
    pin.expiresAtMs = nowMs + this.settings.ttlMs;
    // The shared copy is refreshed at most every tenth of the TTL: a busy session costs Redis nothing per turn.
    if (this.shared !== null && nowMs - pin.sharedAtMs > this.settings.ttlMs / 10) {
      pin.sharedAtMs = nowMs;
      this.shared.touch(this.model, key, this.settings.ttlMs);
    }
    this.metrics?.affinity('hit');
    return pin.deployment;
  }

  /** Why the pinned deployment cannot take this turn, or null when it can. */
  #keeps(pinned: Deployment, candidates: readonly Deployment[], count: number): AffinityOutcome | null {
    if (this.#byId.get(pinned.id) !== pinned) return 'moved_unknown';
    if (!includes(candidates, count, pinned)) return this.health.available(pinned, this.health.now()) ? 'moved_full' : 'moved_cooled';
    return this.#underBound(pinned) ? null : 'moved_overloaded';
  }

  /** The strategy's pick among the candidates other than `pinned` (itself when it is the only one). */
  #elsewhere(pinned: Deployment, candidates: Deployment[], count: number): Deployment {
    const at = candidates.indexOf(pinned);
    if (at === -1 || at >= count) return this.picker.pick(candidates, count);
    if (count === 1) return pinned;
    // Swap it to the end and leave it out (the candidates are the router's scratch space).
    candidates[at] = candidates[count - 1]!;
    candidates[count - 1] = pinned;
    return this.picker.pick(candidates, count - 1);
  }

  /** Clockwise from `point`: the first candidate under its load bound; null when none is. */
  #walk(point: number, candidates: readonly Deployment[], count: number): Deployment | null {
    const { points, owners } = this.#ring;
    const seen = this.#seen;
    seen.fill(0);
    let left = this.deployments.length;
    for (let i = this.#ring.start(point), steps = 0; steps < points.length && left > 0; steps++, i = i + 1 === points.length ? 0 : i + 1) {
      const index = owners[i]!;
      if (seen[index] === 1) continue;
      seen[index] = 1;
      left--;
      const d = this.deployments[index]!;
      if (includes(candidates, count, d) && this.#underBound(d)) return d;
    }
    return null;
  }

  /** Calls in flight there (every replica's) below load_factor × its weighted share of all calls in flight, this one included. */
  #underBound(d: Deployment): boolean {
    let total = 1;
    for (const other of this.deployments) {
      const h = this.health.of(other);
      total += h.inFlight + h.remoteInFlight;
    }
    const h = this.health.of(d);
    const bound = Math.max(MIN_BOUND, Math.ceil((this.settings.loadFactor * total * d.weight) / this.#totalWeight));
    return h.inFlight + h.remoteInFlight < bound;
  }

  #pin(key: string, deployment: Deployment, nowMs: number, moved: boolean): void {
    const pins = this.#pins;
    pins.delete(key);
    if (pins.size >= MAX_PINS) pins.delete(pins.keys().next().value!);
    const pin: Pin = { deployment, expiresAtMs: nowMs + this.settings.ttlMs, sharedAtMs: nowMs };
    pins.set(key, pin);
    // Another replica's pin of the same session wins a first placement: the next turn goes where it says.
    this.shared?.pin(this.model, key, deployment.id, this.settings.ttlMs, moved, (id) => {
      const theirs = this.#byId.get(id);
      if (theirs !== undefined && pins.get(key) === pin) pin.deployment = theirs;
    });
  }
}

function includes(candidates: readonly Deployment[], count: number, d: Deployment): boolean {
  for (let i = 0; i < count; i++) if (candidates[i] === d) return true;
  return false;
}

/**
 * What one replica knows of each deployment: recent failures, cooldowns (its own, a
 * 429's Retry-After, or another replica's through Redis), calls in flight (here and,
 * with Redis, elsewhere), recent time to first byte, and what the readiness probe last
 * found. Kept in Maps keyed by deployment id; read on every call, so nothing here awaits.
 */
import type { Deployment } from '../../config/schema.js';
import type { CooldownReason } from '../../domain/models/routing-metrics.port.js';

export type { CooldownReason };

export interface DeploymentHealth {
  /** Times (ms) of failures within the cooldown window, oldest first. */
  failures: number[];
  coolUntilMs: number;
  coolReason: CooldownReason | null;
  /** After a cooldown the first call probes the deployment back in; others wait for its answer. */
  probing: boolean;
  inFlight: number;
  /** Calls in flight on the other replicas, as last read from Redis. */
  remoteInFlight: number;
  /** Exponentially weighted time to first byte (ms); null until the first answer. */
  ttfbMs: number | null;
  /** When the last time to first byte was measured (0 before the first). */
  ttfbAtMs: number;
  /** The quickest time to first byte (ms) in the current window of QUICKEST_WINDOW_MS, and in the one before; Infinity when none. */
  quickestMs: number;
  quickestBeforeMs: number;
  /** When the current window began. */
  quickestSinceMs: number;
  /** Since when the readiness probe or calls found it unreachable; null while it answers. */
  unreachableSinceMs: number | null;
  unreachableReason: string | null;
}

export interface CooldownPolicy {
  failures: number;
  windowMs: number;
  durationMs: number;
}

/** How much one new time-to-first-byte sample moves the average. */
const TTFB_SMOOTHING = 0.3;
/**
 * The quickest recent answer is kept per window of this length, over the current and the
 * previous window (5–10 s of answers): a deployment that got slower shows it within 10 s.
 */
const QUICKEST_WINDOW_MS = 5_000;

/**
 * The quickest time to first byte of the last 5–10 s: what a call takes there when it does
 * not queue. The average includes the queueing of a burst (on the engine and on this
 * replica's own event loop), which least_busy already counts as calls in flight.
 */
export function quickestTtfbMs(health: DeploymentHealth): number {
  return Math.min(health.quickestMs, health.quickestBeforeMs);
}

export interface HealthEvents {
  /** A deployment went out until `untilMs` (shared with other replicas when Redis is set). */
  cooled(deployment: Deployment, untilMs: number, reason: CooldownReason): void;
}

export class HealthBook {
  readonly #health = new Map<string, DeploymentHealth>();

  constructor(
    private readonly policy: CooldownPolicy,
    private readonly events: HealthEvents,
    readonly now: () => number = Date.now,
  ) {}

  of(deployment: Deployment): DeploymentHealth {
    let health = this.#health.get(deployment.id);
    if (!health) {
      health = {
        failures: [],
        coolUntilMs: 0,
        coolReason: null,
        probing: false,
        inFlight: 0,
        remoteInFlight: 0,
        ttfbMs: null,
        ttfbAtMs: 0,
        quickestMs: Infinity,
        quickestBeforeMs: Infinity,
        quickestSinceMs: 0,
        unreachableSinceMs: null,
        unreachableReason: null,
      };
      this.#health.set(deployment.id, health);
    }
    return health;
  }

  /** Whether a call may go to the deployment now: not cooling down, and not already being probed back in. */
  available(deployment: Deployment, nowMs: number): boolean {
    const health = this.of(deployment);
    if (health.coolUntilMs > nowMs) return false;
    return !(health.coolReason !== null && health.probing);
  }

  /** Marks the call that probes a deployment back in after its cooldown. */
  startAttempt(deployment: Deployment): void {
    const health = this.of(deployment);
    if (health.coolReason !== null) health.probing = true;
    health.inFlight++;
  }

  /** The attempt ended; a probe that ended without a verdict (the caller left) frees the probe for the next call. */
  endAttempt(deployment: Deployment): void {
    const health = this.of(deployment);
    health.inFlight--;
    health.probing = false;
  }

  /** The engine answered; `ttfbMs` null when the answer says nothing of its speed (a refusal). */
  succeeded(deployment: Deployment, ttfbMs: number | null): void {
    const health = this.of(deployment);
    health.failures.length = 0;
    health.coolReason = null;
    health.probing = false;
    health.unreachableSinceMs = null;
    health.unreachableReason = null;
    if (ttfbMs === null) return;
    health.ttfbMs = health.ttfbMs === null ? ttfbMs : health.ttfbMs + TTFB_SMOOTHING * (ttfbMs - health.ttfbMs);
    health.ttfbAtMs = this.now();
    this.#keepQuickest(health, ttfbMs);
  }

  /** A failure that counts toward a cooldown; `unreachable` names a connection failure. Returns whether it cooled the deployment. */
  failed(deployment: Deployment, unreachable: string | null): boolean {
    const now = this.now();
    const health = this.of(deployment);
    if (unreachable !== null && health.unreachableSinceMs === null) {
      health.unreachableSinceMs = now;
      health.unreachableReason = unreachable;
    }
    // A failed probe after a cooldown sends it straight back out.
    if (health.coolReason !== null && health.probing) {
      health.probing = false;
      this.#cool(deployment, health, now + this.policy.durationMs, 'failures');
      return true;
    }
    const since = now - this.policy.windowMs;
    while (health.failures.length > 0 && health.failures[0]! <= since) health.failures.shift();
    health.failures.push(now);
    if (health.failures.length < this.policy.failures) return false;
    health.failures.length = 0;
    this.#cool(deployment, health, now + this.policy.durationMs, 'failures');
    return true;
  }

  /** A 429's Retry-After: no call goes there until `untilMs`. */
  rateLimited(deployment: Deployment, untilMs: number): void {
    const health = this.of(deployment);
    health.probing = false;
    if (untilMs > health.coolUntilMs) this.#cool(deployment, health, untilMs, 'retry_after');
  }

  /** Another replica's cooldown, read from Redis. */
  sharedCooldown(deployment: Deployment, untilMs: number): void {
    const health = this.of(deployment);
    if (untilMs <= health.coolUntilMs) return;
    health.coolUntilMs = untilMs;
    health.coolReason ??= 'shared';
  }

  /** What the readiness probe found: null when the engine answered, else why not (an error code, no host). */
  probed(deployment: Deployment, failure: string | null, checkedAtMs: number): void {
    const health = this.of(deployment);
    if (failure === null) {
      health.unreachableSinceMs = null;
      health.unreachableReason = null;
      return;
    }
    health.unreachableSinceMs ??= checkedAtMs;
    health.unreachableReason = failure;
    // A failed probe counts as a failed call: an engine found dead is taken out without a caller paying for it.
    if (this.of(deployment).coolUntilMs <= checkedAtMs) this.failed(deployment, failure);
  }

  #keepQuickest(health: DeploymentHealth, ttfbMs: number): void {
    const elapsed = health.ttfbAtMs - health.quickestSinceMs;
    if (elapsed < QUICKEST_WINDOW_MS) {
      health.quickestMs = Math.min(health.quickestMs, ttfbMs);
      return;
    }
    // A new window; the one just ended becomes the previous one, unless a whole window passed without an answer.
    health.quickestBeforeMs = elapsed < 2 * QUICKEST_WINDOW_MS ? health.quickestMs : Infinity;
    health.quickestMs = ttfbMs;
    health.quickestSinceMs = health.ttfbAtMs;
  }

  #cool(deployment: Deployment, health: DeploymentHealth, untilMs: number, reason: CooldownReason): void {
    health.coolUntilMs = untilMs;
    health.coolReason = reason;
    this.events.cooled(deployment, untilMs, reason);
  }
}

/**
 * Routing state shared by replicas through Redis (REDIS_URL): a cooldown is written as
 * `<prefix>:cool:<deployment>` (the time it ends, expiring with it), and each replica
 * writes its calls in flight per deployment into `<prefix>:busy:<deployment>` (a hash by
 * replica, expiring unless refreshed). Every replica reads both back twice a second, so
 * replicas agree within a second while no call waits on Redis (but a model's first call
 * on a replica waits for one read, so that it never goes to a deployment another replica
 * cooled). Session affinity's pins (affinity.ts) are written through to
 * `<prefix>:pin:<model>:<session key>` (a deployment id, expiring with the pin), and a
 * session that moved is announced on the channel `<prefix>:pins`, which every replica
 * hears and pins in memory: no call waits on Redis for a pin. A new session needs no
 * announcement (every replica places it on the same ring); a replica that placed one
 * another replica had pinned (it started later) adopts that pin for the next turn. When
 * Redis is unreachable each replica routes on what it knows itself.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Deployment } from '../../config/schema.js';
import type { HealthBook } from './deployment-health.js';
import type { SharedPins } from './affinity.js';

const SYNC_EVERY_MS = 500;
/** A replica that stopped refreshing its counts (it died) drops out of them after this long. */
const BUSY_TTL_MS = 3_000;
const FIRST_CONNECT_WAIT_MS = 1_000;

/** Hears a session another replica moved: its model, key, new deployment and the pin's lifetime. */
export type PinListener = (model: string, key: string, deployment: string, ttlMs: number) => void;

export class SharedRoutingState implements SharedPins {
  readonly #redis: Redis;
  readonly #replica = randomUUID();
  readonly #timer: NodeJS.Timeout;
  /** The connection that listens for moved pins (a subscribed connection serves nothing else). */
  readonly #subscriber: Redis;
  #heard: PinListener | null = null;
  #syncing: Promise<void> | null = null;
  #connecting: Promise<void> | null = null;
  #closed = false;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly deployments: readonly Deployment[],
    private readonly health: HealthBook,
  ) {
    this.#redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
    // Unreachable Redis: each replica keeps routing on its own state; ioredis would log every retry otherwise.
    this.#redis.on('error', () => {});
    this.#timer = setInterval(() => void this.sync(), SYNC_EVERY_MS);
    this.#timer.unref();
    this.#subscriber = this.#redis.duplicate();
    this.#subscriber.on('error', () => {});
    // Without an offline queue a command before the connection is ready fails: subscribe on every (re)connection.
    this.#subscriber.on('ready', () => void this.#subscriber.subscribe(this.#channel()).catch(() => {}));
    this.#subscriber.on('message', (_channel: string, message: string) => this.#moved(message));
  }

  /** `listener` hears every session another replica moved. */
  onPin(listener: PinListener): void {
    this.#heard = listener;
  }

  /** Tells the other replicas that `deployment` is out until `untilMs`. */
  publishCooldown(deployment: Deployment, untilMs: number): void {
    const ttl = untilMs - Date.now();
    if (ttl <= 0 || this.#redis.status !== 'ready') return;
    // Only ever lengthens a cooldown another replica wrote (GT needs Redis 7; a script works on 6).
    this.#redis.eval(LONGER_COOLDOWN, 1, this.#key('cool', deployment), String(untilMs), String(ttl)).catch(() => {});
  }

  pin(model: string, key: string, deployment: string, ttlMs: number, moved: boolean, adopt: (deployment: string) => void): void {
    if (this.#redis.status !== 'ready') return;
    const pinKey = this.#pinKey(model, key);
    if (moved) {
      this.#redis.set(pinKey, deployment, 'PX', ttlMs).catch(() => {});
      this.#redis.publish(this.#channel(), JSON.stringify([this.#replica, model, key, deployment, ttlMs])).catch(() => {});
      return;
    }
    this.#redis
      .eval(CLAIM_PIN, 1, pinKey, deployment, String(ttlMs))
      .then((theirs) => {
        if (typeof theirs === 'string' && theirs !== deployment) adopt(theirs);
      })
      .catch(() => {});
  }

  touch(model: string, key: string, ttlMs: number): void {
    if (this.#redis.status === 'ready') this.#redis.pexpire(this.#pinKey(model, key), ttlMs).catch(() => {});
  }

  /**
   * Reads the shared state now, waiting briefly for the first connection (a short-lived
   * command such as `sluice models list` asks once, right after start).
   */
  async syncNow(): Promise<void> {
    if (this.#redis.status === 'connecting' || this.#redis.status === 'connect') await (this.#connecting ??= this.#firstConnection());
    await this.sync();
  }

  /** Writes this replica's counts and reads everyone's cooldowns and counts; resolves when done (or Redis failed). */
  sync(): Promise<void> {
    if (this.#closed || this.#redis.status !== 'ready') return Promise.resolve();
    this.#syncing ??= this.#exchange().finally(() => (this.#syncing = null));
    return this.#syncing;
  }

  /** The first connection, or FIRST_CONNECT_WAIT_MS, whichever comes first; one wait however many calls ask. */
  #firstConnection(): Promise<void> {
    return Promise.race([
      new Promise<void>((resolve) => this.#redis.once('ready', () => resolve())),
      new Promise<void>((resolve) => setTimeout(resolve, FIRST_CONNECT_WAIT_MS).unref()),
    ]).finally(() => (this.#connecting = null));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#syncing?.catch(() => {});
    await this.#redis.quit().catch(() => this.#redis.disconnect());
    await this.#subscriber.quit().catch(() => this.#subscriber.disconnect());
  }

  #moved(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (!Array.isArray(parsed) || parsed.length !== 5 || parsed[0] === this.#replica) return;
    const [, model, key, deployment, ttlMs] = parsed as unknown[];
    if (typeof model === 'string' && typeof key === 'string' && typeof deployment === 'string' && typeof ttlMs === 'number') {
      this.#heard?.(model, key, deployment, ttlMs);
    }
  }

  #channel(): string {
    return `${this.prefix}:pins`;
  }

  async #exchange(): Promise<void> {
    const pipeline = this.#redis.pipeline();
    for (const d of this.deployments) {
      const busy = this.#key('busy', d);
      pipeline.hset(busy, this.#replica, `${this.health.of(d).inFlight}:${Date.now()}`);
      pipeline.pexpire(busy, BUSY_TTL_MS);
      pipeline.get(this.#key('cool', d));
      pipeline.hgetall(busy);
    }
    let answers: [Error | null, unknown][] | null;
    try {
      answers = await pipeline.exec();
    } catch {
      return;
    }
    if (!answers) return;
    const now = Date.now();
    this.deployments.forEach((d, i) => {
      const [, cool] = answers[i * 4 + 2]!;
      const [, busy] = answers[i * 4 + 3]!;
      const until = Number(cool);
      if (Number.isFinite(until) && until > now) this.health.sharedCooldown(d, until);
      this.health.of(d).remoteInFlight = othersInFlight(busy as Record<string, string> | null, this.#replica, now);
    });
  }

  #key(kind: 'cool' | 'busy', deployment: Deployment): string {
    return `${this.prefix}:${kind}:${deployment.id}`;
  }

  #pinKey(model: string, key: string): string {
    return `${this.prefix}:pin:${model}:${key}`;
  }
}

const LONGER_COOLDOWN = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

/** Pins the session unless a replica did already: then keeps that pin alive and answers it. */
const CLAIM_PIN = `
local theirs = redis.call('GET', KEYS[1])
if theirs then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return theirs end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

/** The other live replicas' calls in flight (a field not refreshed within BUSY_TTL_MS is a replica that is gone). */
function othersInFlight(fields: Record<string, string> | null, self: string, nowMs: number): number {
  let total = 0;
  for (const [replica, value] of Object.entries(fields ?? {})) {
    if (replica === self) continue;
    const [count, at] = value.split(':').map(Number);
    if (count !== undefined && at !== undefined && nowMs - at < BUSY_TTL_MS) total += count;
  }
  return total;
}

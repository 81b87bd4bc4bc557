/**
 * Key budgets shared by replicas through Redis (REDIS_URL). Per key and window:
 * `<prefix>:<key>:<window>:<start>` is a hash whose `spent` is what the key spent in the
 * window, and `…:holds` a sorted set of the holds of calls in flight (member
 * `<hold id>:<micros>`, score the time it expires). A hold is checked and taken in one
 * Lua script (spent + held + the hold within the limit), so concurrent calls on any
 * replica cannot overspend; it is settled by another that drops it and adds the call's
 * cost to `spent`, once the cost is committed to the database. Each replica refreshes
 * its holds' expiry while their calls run, so the holds of a replica that died expire
 * after the hold TTL (budgets.hold_ttl_seconds).
 *
 * `spent` is seeded from the usage records (the sum of the key's cost in the window)
 * when absent: at a window's first call, or after Redis lost it. A call whose cost is
 * committed while another replica seeds may be counted twice or not at all, once; the
 * seed is the only step that is not atomic. The state expires an hour after its window
 * ends (a `total` budget's a week after its last hold, then it is seeded again).
 *
 * While Redis is unreachable, a replica holds budgets in its own memory (the fallback:
 * local-budget-ledger.ts), as the rate limiter does.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { firstConnection } from '../rate-limit/rate-limiter.js';
import { accountName, type BudgetAccount, type BudgetHold, type BudgetLedger, type BudgetView, type SpendStore } from '../../domain/billing/budget-ledger.port.js';

/** Sums the live holds of KEYS[2] (dropping those expired before ARGV[1]); defined before the scripts that use it. */
const HELD = `
local function held(holds, now)
  redis.call('ZREMRANGEBYSCORE', holds, '-inf', now)
  local sum = 0
  for _, member in ipairs(redis.call('ZRANGE', holds, 0, -1)) do sum = sum + tonumber(string.match(member, ':(%d+)$')) end
  return sum
end
`;

/** KEYS: state, holds. ARGV: now. → {spent, held}, or {-1, 0} when spent must be seeded. */
const VIEW = `${HELD}
local spent = redis.call('HGET', KEYS[1], 'spent')
if not spent then return {-1, 0} end
return {tonumber(spent), held(KEYS[2], ARGV[1])}`;

/** KEYS: state. ARGV: spent (from the database), state TTL ms. → the spent kept (an earlier seed wins). */
const SEED = `
redis.call('HSETNX', KEYS[1], 'spent', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return tonumber(redis.call('HGET', KEYS[1], 'spent'))`;

/** KEYS: state, holds. ARGV: now, limit, micros, member, expires at, state TTL ms. → 1 held, 0 no room, -1 not seeded. */
const HOLD = `${HELD}
local spent = redis.call('HGET', KEYS[1], 'spent')
if not spent then return -1 end
local room = tonumber(ARGV[2]) - tonumber(spent) - held(KEYS[2], ARGV[1])
if room <= 0 or tonumber(ARGV[3]) > room then return 0 end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`;

/** KEYS: the hold's holds, the state of the window the cost falls in. ARGV: member, cost. */
const SETTLE = `
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HEXISTS', KEYS[2], 'spent') == 1 then redis.call('HINCRBY', KEYS[2], 'spent', ARGV[2]) end
return 1`;

const POLL_MS = 25;
/** A loaded host can take seconds to connect; only a host that answers nothing keeps the first calls waiting this long. */
const CONNECT_TIMEOUT_MS = 10_000;
const FIRST_CONNECT_WAIT_MS = CONNECT_TIMEOUT_MS;
const HOUR_MS = 3_600_000;
const TOTAL_STATE_TTL_MS = 7 * 24 * HOUR_MS;

interface LiveHold {
  holdsKey: string;
  member: string;
}

export class RedisBudgetLedger implements BudgetLedger {
  readonly #redis: Redis;
  /** This replica's holds in flight, refreshed every third of the TTL. */
  readonly #live = new Set<LiveHold>();
  readonly #timer: NodeJS.Timeout;
  /** Settles once the first connection attempt did (or FIRST_CONNECT_WAIT_MS passed): a replica just started does not hold budgets alone meanwhile. */
  readonly #connected: Promise<void>;
  #connecting = true;

  constructor(
    url: string,
    private readonly options: { prefix: string; holdTtlMs: number; spends: SpendStore; fallback: BudgetLedger },
  ) {
    this.#redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: CONNECT_TIMEOUT_MS });
    // Unreachable Redis: budgets are held per replica meanwhile; ioredis would log every retry otherwise.
    this.#redis.on('error', () => {});
    this.#timer = setInterval(() => this.#refresh(), Math.max(1_000, Math.floor(options.holdTtlMs / 3)));
    this.#timer.unref();
    this.#connected = firstConnection(this.#redis, FIRST_CONNECT_WAIT_MS).then(() => {
      this.#connecting = false;
    });
  }

  async view(account: BudgetAccount): Promise<BudgetView> {
    if (this.#connecting) await this.#connected;
    if (this.#redis.status !== 'ready') return this.options.fallback.view(account);
    const keys = this.#keys(account);
    try {
      const [seen, held] = (await this.#redis.eval(VIEW, 2, keys.state, keys.holds, Date.now())) as [number, number];
      let spent = seen;
      if (spent < 0) {
        const seed = await this.options.spends.spentSince(account.keyId, account.span.startMs);
        spent = Number(await this.#redis.eval(SEED, 1, keys.state, seed, stateTtlMs(account)));
      }
      return {
        spent,
        held,
        tryHold: (micros) => this.#hold(account, keys, micros),
        whenReleased: (timeoutMs, signal) => pause(Math.min(timeoutMs, POLL_MS), signal),
        close: () => {},
      };
    } catch {
      return this.options.fallback.view(account);
    }
  }

  async #hold(account: BudgetAccount, keys: { state: string; holds: string }, micros: number): Promise<BudgetHold | null> {
    const now = Date.now();
    const member = `${randomUUID()}:${micros}`;
    const args = [now, account.budget.limitMicros, micros, member, now + this.options.holdTtlMs, stateTtlMs(account)];
    // Redis lost meanwhile: no hold, as if the room were held; the call tries again (on the fallback).
    const answer = await this.#redis.eval(HOLD, 2, keys.state, keys.holds, ...args).catch(() => 0);
    if (Number(answer) !== 1) return null;
    const live: LiveHold = { holdsKey: keys.holds, member };
    this.#live.add(live);
    let done = false;
    const end = (script: Promise<unknown>) => {
      done = true;
      this.#live.delete(live);
      // A lost answer leaves the hold to expire with its TTL.
      script.catch(() => {});
    };
    return {
      micros,
      // The spend in Redis changes in one script with the hold: nothing to mark meanwhile.
      settling: () => {},
      settled: (costMicros, now) => {
        if (!done) end(this.#redis.eval(SETTLE, 2, keys.holds, this.#keys(now).state, member, costMicros));
      },
      release: () => {
        if (!done) end(this.#redis.zrem(keys.holds, member));
      },
    };
  }

  #keys(account: BudgetAccount): { state: string; holds: string } {
    const state = `${this.options.prefix}:${accountName(account)}`;
    return { state, holds: `${state}:holds` };
  }

  /** Pushes the expiry of this replica's holds in flight (XX: a hold already settled stays gone). */
  #refresh(): void {
    if (this.#live.size === 0 || this.#redis.status !== 'ready') return;
    const expires = Date.now() + this.options.holdTtlMs;
    const pipeline = this.#redis.pipeline();
    for (const { holdsKey, member } of this.#live) pipeline.zadd(holdsKey, 'XX', expires, member);
    pipeline.exec().catch(() => {});
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

/** How long a window's state outlives its last hold: an hour past the window's end; a `total` budget's a week. */
function stateTtlMs(account: BudgetAccount): number {
  const { endMs } = account.span;
  return endMs === null ? TOTAL_STATE_TTL_MS : Math.max(HOUR_MS, endMs - Date.now() + HOUR_MS);
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

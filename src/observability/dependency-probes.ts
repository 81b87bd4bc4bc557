/**
 * Readiness probes of the shared dependencies a replica needs besides its database: the
 * blob store, and Redis when REDIS_URL is set. Each probe is bounded by a timeout so a
 * hung dependency makes /readyz answer "not ready" instead of hanging the probe. Answers
 * name the dependency and the error's code only: /readyz is public, so no hosts, paths
 * or messages (the full error goes to the log).
 */
import type { Logger } from 'pino';
import type { BlobStore } from '../domain/files/blob-store.port.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';

const PROBE_TIMEOUT_MS = 3_000;

export interface ProbeTargets {
  blobs: BlobStore;
  rateLimiter: RateLimiter;
  redisConfigured: boolean;
  logger: Logger;
}

/** 'ok' or 'unreachable (CODE)' per dependency: `blob_store`, and `redis` when configured. */
export async function probeSharedDependencies(targets: ProbeTargets): Promise<Record<string, string>> {
  const probes: [string, () => Promise<void>][] = [['blob_store', () => targets.blobs.check?.() ?? Promise.resolve()]];
  if (targets.redisConfigured && targets.rateLimiter.check) {
    const check = targets.rateLimiter.check.bind(targets.rateLimiter);
    probes.push(['redis', check]);
  }
  const results = await Promise.all(
    probes.map(async ([name, probe]) => {
      try {
        await withTimeout(probe(), PROBE_TIMEOUT_MS);
        return [name, 'ok'] as const;
      } catch (err) {
        targets.logger.warn({ err, dependency: name }, 'readiness probe failed');
        return [name, `unreachable (${errorCode(err)})`] as const;
      }
    }),
  );
  return Object.fromEntries(results);
}

/**
 * Start-up: REDIS_URL is set but Redis does not answer. The limiter falls back to counting
 * per replica, so N replicas admit N × the limit until Redis is back: say so loudly.
 */
export async function warnIfRedisUnreachable(targets: ProbeTargets): Promise<void> {
  if (!targets.redisConfigured || !targets.rateLimiter.check) return;
  try {
    await withTimeout(targets.rateLimiter.check(), PROBE_TIMEOUT_MS);
  } catch (err) {
    targets.logger.warn(
      { err: { code: errorCode(err) }, dependency: 'redis' },
      'REDIS_URL is set but Redis is unreachable: rate limits are counted per replica (each replica admits the full limit) until it answers; /readyz reports redis as unreachable',
    );
  }
}

function errorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,40}$/.test(code)) return code;
    if (err instanceof TimeoutError) return 'timeout';
    if (typeof name === 'string' && name !== 'Error' && /^[A-Za-z0-9_.-]{1,40}$/.test(name)) return name;
  }
  return 'error';
}

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError('probe timed out')), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

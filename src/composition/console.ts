/** The web console's long-lived parts: the session service, the sign-in attempt limiter, and the storefront activity its operator pages read. */
import type { Config } from '../config/schema.js';
import type { Database } from '../storage/db/database.js';
import type { ApiKeyAuthenticator } from '../domain/identity/authenticator.js';
import type { Clock } from '../domain/shared/clock.js';
import { ConsoleSessions } from '../domain/console/sessions.js';
import { ConsoleSessionsRepository } from '../storage/db/repositories/console-sessions.repository.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import type { StorefrontActivityStore } from '../domain/storefront/activity-store.port.js';
import { StorefrontActivityRepository } from '../storage/db/repositories/storefront-activity.repository.js';

export interface ConsoleParts {
  sessions: ConsoleSessions;
  /** Sign-in attempts per client address per minute (shared through Redis when configured). */
  signInLimiter: RateLimiter;
  /**
   * Storefront purchases and accounts for the admin routes (`/admin/v1/storefront/…`, the
   * console's Storefront page); readable whether or not the storefront is configured now.
   */
  storefrontActivity: StorefrontActivityStore;
}

export function createConsoleParts(deps: { config: Readonly<Config>; database: Database; authenticator: ApiKeyAuthenticator; clock: Clock }): ConsoleParts {
  const { config } = deps;
  return {
    sessions: new ConsoleSessions({
      store: new ConsoleSessionsRepository(deps.database),
      authenticator: deps.authenticator,
      adminToken: config.adminToken,
      clock: deps.clock,
      ttlMs: config.console.sessionTtlMs,
    }),
    signInLimiter: createRateLimiter({
      requestsPerMinute: config.console.signInAttemptsPerMinute,
      redisUrl: config.redisUrl,
      keyPrefix: `${config.rateLimit.redisPrefix}:console-sign-in`,
    }),
    storefrontActivity: new StorefrontActivityRepository(deps.database),
  };
}

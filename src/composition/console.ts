/** The web console's long-lived parts: the session service and the sign-in attempt limiter. */
import type { Config } from '../config/schema.js';
import type { Database } from '../storage/db/database.js';
import type { ApiKeyAuthenticator } from '../domain/auth/authenticator.js';
import type { Clock } from '../domain/shared/clock.js';
import { ConsoleSessions } from '../domain/console/sessions.js';
import { ConsoleSessionsRepository } from '../storage/db/repositories/console-sessions.repository.js';
import { createRateLimiter, type RateLimiter } from '../storage/rate-limit/rate-limiter.js';

export interface ConsoleParts {
  sessions: ConsoleSessions;
  /** Sign-in attempts per client address per minute (shared through Redis when configured). */
  signInLimiter: RateLimiter;
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
  };
}

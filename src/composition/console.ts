/** The web console: the session service, the sign-in attempt limiter, and its scope (which mounts every feature's shared routes). */
import { ConsoleSessions } from '../domain/console/sessions.js';
import { OidcSignIn } from '../domain/console/oidc-sign-in.js';
import { OpenIdProvider } from '../adapters/oidc/openid-provider.js';
import { SignInFlowsRepository } from '../storage/db/repositories/sign-in-flows.repository.js';
import type { OidcConfig } from '../config/sign-in-config.js';
import type { PeopleService } from '../domain/people/people.service.js';
import { ConsoleSessionsRepository } from '../storage/db/repositories/console-sessions.repository.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { consoleScope } from '../http/scopes/console.js';
import type { CoreBilling, CoreInfrastructure } from './core.js';
import type { Feature, Peers } from './feature.js';
import type { PeopleParts } from './people.js';

export interface ConsoleParts {
  sessions: ConsoleSessions;
  /** Sign-in through the identity provider (`sign_in.oidc`); null when none is configured. */
  oidc: OidcSignIn | null;
  /** Sign-in attempts per client address per minute (shared through Redis when configured). */
  signInLimiter: RateLimiter;
}

export function createConsoleFeature(core: CoreInfrastructure & CoreBilling, peers: Peers<{ people: PeopleParts }>): Feature<ConsoleParts> {
  const { config } = core;
  const { people } = peers.people.services;
  const sessions = new ConsoleSessions({
    store: new ConsoleSessionsRepository(core.database),
    authenticator: core.authenticator,
    adminToken: config.adminToken,
    clock: core.clock,
    ttlMs: config.console.sessionTtlMs,
  });
  const signInLimiter = createRateLimiter({
    requestsPerMinute: config.console.signInAttemptsPerMinute,
    redisUrl: config.redisUrl,
    keyPrefix: `${config.rateLimit.redisPrefix}:console-sign-in`,
  });
  const oidc = config.sign_in.oidc && createOidcSignIn(config.sign_in.oidc, { core, people, sessions });
  return {
    services: { sessions, signInLimiter, oidc },
    scopes: (shared) => [
      consoleScope(
        {
          sessions, projects: core.projects, people, audit: core.audit, meter: core.creditMeter, rateLimit: core.apiKeyRateLimit, signInLimiter, oidc,
          operators: config.adminToken !== null || oidc !== null, mcpPath: config.mcp.prefix,
        },
        shared,
      ),
    ],
    close: () => signInLimiter.close(),
  };
}

function createOidcSignIn(oidc: OidcConfig, { core, people, sessions }: { core: CoreInfrastructure; people: PeopleService; sessions: ConsoleSessions }): OidcSignIn {
  const provider = new OpenIdProvider({ name: oidc.providerName, issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret, scopes: oidc.scopes });
  return new OidcSignIn({ provider, flows: new SignInFlowsRepository(core.database), mapping: oidc, people, sessions, clock: core.clock, redirectUrl: oidc.redirectUrl });
}

/**
 * The web console: its static files at /console, sign-in, and the same route modules as
 * /v1 and /admin/v1 mounted under /console/api with the session strategy, so a browser
 * sees exactly what its credential would see through the API. `GET /` from a browser
 * goes to the console.
 */
import type { Meter } from '../../domain/billing/meter.js';
import type { ConsoleSessions } from '../../domain/console/sessions.js';
import type { ProjectsService } from '../../domain/projects/projects.service.js';
import type { PeopleService } from '../../domain/people/people.service.js';
import type { AuditRecorder } from '../../domain/audit/audit-log.js';
import type { RateLimiter } from '../../domain/identity/rate-limiter.port.js';
import { SessionStrategy } from '../auth/session-strategy.js';
import { bindRoutes, type BoundRoutes } from '../route-module.js';
import { registerSessionRoutes } from '../routes/console/session-routes.js';
import { registerOidcRoutes } from '../routes/console/oidc-routes.js';
import type { OidcSignIn } from '../../domain/console/oidc-sign-in.js';
import { CONSOLE_SECURITY_HEADERS, consoleBuildDir, registerConsoleAssets, registerRootRedirect } from '../routes/console/static-assets.js';
import type { ScopeDeclaration } from './api-scope.js';
import type { ScopePolicy, ScopeRateLimit } from '../scope-policy.js';

export interface ConsoleScopeDeps {
  sessions: ConsoleSessions;
  projects: ProjectsService;
  /** Users' sessions: the user, their roles; and the projects the console lists for them. */
  people: PeopleService;
  /** Sign-ins, successful or not, are audited. */
  audit: AuditRecorder;
  /** Console calls are paid from project credit, as the credential's would be. */
  meter: Meter;
  /** The API-key limit: a developer's session counts against its key's, an operator's against the operator's. */
  rateLimit: ScopeRateLimit;
  signInLimiter: RateLimiter;
  /** Sign-in through the identity provider, when one is configured. */
  oidc: OidcSignIn | null;
  /** The admin routes are mounted only when someone may be an operator (an admin token, or an identity provider). */
  operators: boolean;
  /** Where the MCP endpoint listens (`mcp.prefix`), which the console shows agents. */
  mcpPath: string;
}

export interface ConsoleRoutes {
  /** The route modules of /v1. */
  api: readonly BoundRoutes[];
  /** The route modules of /admin/v1. */
  admin: readonly BoundRoutes[];
}

export function consoleScope(deps: ConsoleScopeDeps, routes: ConsoleRoutes): ScopeDeclaration {
  const strategy = (kind: 'project' | 'operator') => new SessionStrategy({ sessions: deps.sessions, projects: deps.projects, users: deps.people, meter: deps.meter, scope: kind });
  // The session's own refusals (CSRF, operator only) are 403 on every route mounted here,
  // the decision route included (its wire answers a bad API key 401).
  const policy: ScopePolicy = {
    rateLimit: { ...deps.rateLimit, exceededMessage: 'Rate limit exceeded: too many requests per minute for this console session' },
    statusOverrides: { permission: 403 },
  };
  const api: ScopeDeclaration = { prefix: '/console/api/v1', strategy: strategy('project'), routes: routes.api, policy };
  const admin: ScopeDeclaration = { prefix: '/console/api/admin', strategy: strategy('operator'), routes: routes.admin, policy };
  return {
    prefix: '',
    routes: [registerRootRedirect],
    scopes: [
      {
        prefix: '',
        routes: [
          bindRoutes(registerConsoleAssets, { root: consoleBuildDir() }),
          bindRoutes(registerSessionRoutes, { sessions: deps.sessions, people: deps.people, audit: deps.audit, signInLimiter: deps.signInLimiter, mcpPath: deps.mcpPath }),
          bindRoutes(registerOidcRoutes, { signIn: deps.oidc, audit: deps.audit, signInLimiter: deps.signInLimiter }),
        ],
        // The same routes are documented once, under /v1 and /admin/v1.
        policy: { documented: false, cookies: true, answerHeaders: CONSOLE_SECURITY_HEADERS },
        scopes: deps.operators ? [api, admin] : [api],
      },
    ],
  };
}

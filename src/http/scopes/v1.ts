/**
 * `/v1`: the API's route modules (every feature's), admitted by API key and paid from
 * project credit; its OpenAPI document is public.
 */
import type { Meter } from '../../domain/billing/meter.js';
import type { ApiKeyAuthenticator } from '../../domain/identity/authenticator.js';
import { ApiKeyStrategy } from '../auth/api-key-strategy.js';
import type { BoundRoutes } from '../route-module.js';
import { OPENAPI_PATH, registerOpenApiRoute } from '../routes/openapi.js';
import type { ScopeDeclaration } from './api-scope.js';
import type { ScopeRateLimit } from '../scope-policy.js';

/** How /v1 callers authenticate: an API key, in `x-api-key` or as a bearer token. */
export const API_KEY_SECURITY = [
  { name: 'ApiKey', scheme: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  { name: 'BearerApiKey', scheme: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token' } },
] as const;

export interface V1ScopeDeps {
  authenticator: ApiKeyAuthenticator;
  /** Project credit, and the key's budget when it has one. */
  meter: Meter;
  /** Requests per minute per API key (`rate_limit.requests_per_minute`). */
  rateLimit: ScopeRateLimit;
}

export function v1Scope(deps: V1ScopeDeps, routes: readonly BoundRoutes[]): ScopeDeclaration {
  return {
    prefix: '/v1',
    strategy: new ApiKeyStrategy(deps.authenticator, deps.meter),
    routes: [registerOpenApiRoute, ...routes],
    policy: { rateLimit: deps.rateLimit, security: API_KEY_SECURITY, publicPaths: [OPENAPI_PATH] },
  };
}

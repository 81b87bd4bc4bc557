/**
 * Mounts route modules under a prefix with the scope's own way of admitting callers and,
 * where its statuses differ from the default table, its own error statuses. `/v1` is one
 * such scope (API keys, project credit); a gateway or a storefront mounts the same route
 * modules with another strategy, whose callers carry another meter.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Container } from '../../container.js';
import { registerCallerAuth } from '../auth/caller-auth.js';
import type { AuthStrategy } from '../auth/strategy.js';
import type { StatusOverrides } from '../errors.js';
import { setScopeErrorHandler } from '../plugins/error-handler.js';

/** A route module: registers its routes on a scope; never knows the scope's strategy. */
export type RouteModule = (scope: FastifyInstance, container: Container) => void;

export interface ApiScopeOptions {
  container: Container;
  strategy: AuthStrategy;
  routes: readonly RouteModule[];
  /** Error kinds this scope answers with other statuses (e.g. `insufficient_quota` → 402). */
  statusOverrides?: StatusOverrides;
}

export const apiScope: FastifyPluginAsync<ApiScopeOptions> = async (scope, { container, strategy, routes, statusOverrides }) => {
  registerCallerAuth(scope, {
    strategy,
    rateLimiter: container.rateLimiter,
    requestsPerMinute: container.config.rateLimit.requestsPerMinute,
  });
  if (statusOverrides) setScopeErrorHandler(scope, statusOverrides);
  for (const register of routes) register(scope, container);
};

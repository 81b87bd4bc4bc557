/**
 * A scope is one declaration: route modules mounted under a prefix with the scope's own
 * way of admitting callers (an AuthStrategy, whose callers carry the scope's Meter) and its
 * own policy (scope-policy.ts: rate limit, CORS, OpenAPI security, error statuses and
 * bodies, answer fields, settlement trailers). `/v1` is one such scope (API keys, project
 * credit); a gateway or a storefront mounts the same route modules with another strategy
 * and another policy, e.g.:
 *
 *   await app.register(apiScope, {
 *     prefix: '/gateway/v1', container, strategy: signatureStrategy,
 *     routes: [registerChatCompletionsRoute],
 *     policy: { rateLimit: { limiter, requestsPerMinute: 120, keyOf: (p) => p.subject ?? p.projectId,
 *               exceededMessage: '… for this agent' },
 *               security: [{ name: 'GatewaySignature', scheme: { type: 'apiKey', in: 'header', name: 'gw-signature' } }],
 *               trailers: ['gw-usage'] },
 *   });
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Container } from '../../container.js';
import { registerCallerAuth } from '../auth/caller-auth.js';
import type { AuthStrategy } from '../auth/strategy.js';
import { registerScopeCors } from '../plugins/cors.js';
import { declareSecurityScheme } from '../openapi-security.js';
import type { ScopePolicy, ScopeRateLimit } from '../scope-policy.js';
import { serializeAsBefore } from '../schemas/document-only.js';

/** A route module: registers its routes on a scope; never knows the scope's strategy. */
export type RouteModule = (scope: FastifyInstance, container: Container) => void;

export interface ApiScopeOptions {
  container: Container;
  strategy: AuthStrategy;
  routes: readonly RouteModule[];
  /** The scope's policy; its rate limit defaults to the API-key limit of `rateLimit.requests_per_minute`. */
  policy?: Omit<ScopePolicy, 'rateLimit'> & { rateLimit?: Partial<ScopeRateLimit> };
}

export const apiScope: FastifyPluginAsync<ApiScopeOptions> = async (scope, { container, strategy, routes, policy: declared = {} }) => {
  const rateLimit: ScopeRateLimit = {
    limiter: container.rateLimiter,
    requestsPerMinute: container.config.rateLimit.requestsPerMinute,
    ...declared.rateLimit,
  };
  const policy: ScopePolicy = { ...declared, rateLimit };
  stampPolicy(scope, policy);
  registerCallerAuth(scope, { strategy, rateLimit });
  if (policy.cors) registerScopeCors(scope);
  if (policy.answerFields) {
    const answerFields = policy.answerFields;
    scope.addHook('preSerialization', (request, reply, payload, done) => {
      const answer = payload as Record<string, unknown> | null;
      if (reply.statusCode >= 300 || answer === null || typeof answer !== 'object' || Array.isArray(answer)) return done(null, payload);
      done(null, answerFields(request, reply, answer));
    });
  }
  for (const register of routes) register(scope, container);
};

/** Every route mounted in `scope` (route modules' child scopes included) carries the policy, and its security requirement. */
function stampPolicy(scope: FastifyInstance, policy: ScopePolicy): void {
  const schemes = policy.security ?? [];
  for (const scheme of schemes) declareSecurityScheme(scope, scheme);
  const requirement = schemes.map((s) => ({ [s.name]: [] }));
  // A response schema's serializer drops the fields it does not list: a scope that adds
  // fields to its answers serializes them whole.
  const serializeWhole = policy.answerFields !== undefined;
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, scope: policy };
    if (serializeWhole) route.serializerCompiler = serializeAsBefore.serializerCompiler;
    if (requirement.length > 0 && route.schema && !route.schema.hide) route.schema = { ...route.schema, security: requirement };
  });
}

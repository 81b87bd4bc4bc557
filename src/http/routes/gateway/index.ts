/**
 * `/gateway/v1`: the same route modules as `/v1` (chat completions, responses,
 * embeddings), admitted by the intermediary's signature and paid by the intermediary.
 * Everything the gateway's wire does differently is declared here, on the scope, never in
 * the shared handlers: the models a route serves, error statuses (420 for an input over
 * the model's limit) and bodies (a failed Responses object on /responses), `gw-usage` as
 * a trailer on streams and in the final usage chunk, and a rate limit per agent.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Container } from '../../../container.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { modelNotFound } from '../../../domain/models/model-resolver.port.js';
import { GatewayStrategy } from '../../auth/gateway-strategy.js';
import { headerOf } from '../../auth/strategy.js';
import type { ErrorEnvelope } from '../../errors.js';
import { apiScope, type ApiScopeOptions, type RouteModule } from '../api-scope.js';
import { registerChatCompletionsRoute } from '../v1/chat-completions.js';
import { registerEmbeddingsRoute } from '../v1/embeddings.js';
import { registerResponsesRoute } from '../v1/responses.js';
import { failedResponseObject } from './responses-error.js';

export const GATEWAY_ROUTE_MODULES: readonly RouteModule[] = [registerChatCompletionsRoute, registerResponsesRoute, registerEmbeddingsRoute];

/** Routes of this scope that serve fewer models than on `/v1` (spec: Gateway routes). */
const MODELS_BY_ROUTE: ReadonlyMap<string, ReadonlySet<string>> = new Map([['/embeddings', new Set(['all-minilm-l6-v2', 'bge-small-en-v1.5'])]]);

/**
 * Gives the routes of MODELS_BY_ROUTE a check of the requested model, and only them: a
 * scope-wide hook would run on every chat call for nothing.
 */
function refuseUnservedModels(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const models = MODELS_BY_ROUTE.get(route.url.slice(scope.prefix.length));
    if (!models) return;
    const refuse = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
      const model = (request.body as { model?: unknown } | null)?.model;
      if (typeof model === 'string' && !models.has(model)) return done(modelNotFound(model));
      done();
    };
    route.preHandler = [route.preHandler ?? [], refuse].flat();
  });
}

const isEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'object';

/** The gateway's policy: what its wire does differently from `/v1`. */
export function gatewayPolicy(container: Container, prefix: string): NonNullable<ApiScopeOptions['policy']> {
  const responsesUrl = `${prefix}/responses`;
  return {
    rateLimit: {
      limiter: container.gateway.rateLimiter,
      requestsPerMinute: container.config.gateway.requestsPerMinute,
      // The limiter is the gateway's own (in Redis, under its own prefix): the agent id alone is the key.
      keyOf: (principal) => principal.subject ?? '',
      exceededMessage: 'Rate limit exceeded: too many requests per minute for this agent',
    },
    security: [{ name: 'GatewaySignature', scheme: { type: 'apiKey', in: 'header', name: 'gw-signature', description: 'HMAC-SHA256 of the request, see README "Gateway"' } }],
    cors: {
      allowedHeaders: ['content-type', 'gw-signature', 'gw-request-id', 'gw-agent-id'],
      exposedHeaders: ['x-request-id', 'gw-request-id', 'gw-usage', 'retry-after', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests'],
    },
    statusOverrides: { context_length: 420 },
    // A refusal with its own body (the signature's 401, the intermediary's 402) keeps it;
    // on /responses, other client errors are a failed Responses object.
    errorBody: (request, error, mapped) =>
      request.routeOptions.url === responsesUrl && error.challenge?.body === undefined && mapped.status < 500 && isEnvelope(mapped.body)
        ? failedResponseObject(request, mapped.body, toUnixSeconds(container.clock.nowMs()))
        : mapped.body,
    trailers: ['gw-usage'],
    streamEventFields: (_request, event, trailers) =>
      event.usage && typeof event.usage === 'object' && trailers['gw-usage'] !== undefined ? { ...event, gw_usage: trailers['gw-usage'] } : event,
  };
}

export const gatewayRoutes: FastifyPluginAsync<{ container: Container }> = async (scope, { container }) => {
  const { gateway } = container;
  const strategy = new GatewayStrategy({
    verifier: gateway.verifier,
    meter: gateway.meter,
    tenantProjectId: gateway.tenantProjectId,
    intermediaryId: gateway.intermediaryId,
    onRejected: (reason) => gateway.metrics.signatureRejections.inc({ reason }),
  });
  // The intermediary's request id comes back on every answer, for its own correlation.
  scope.addHook('onRequest', (request, reply, done) => {
    const id = headerOf(request, 'gw-request-id');
    if (id !== undefined) reply.header('gw-request-id', id);
    done();
  });
  // The intermediary's ids beside Sluice's, one line per call (through the root logger: a
  // request's own child logger is made only when something else logs).
  // The level is fixed at start (LOG_LEVEL): below info, the hook is not registered at all.
  const { logger } = container;
  if (logger.isLevelEnabled('info')) {
    scope.addHook('onResponse', (request, reply, done) => {
      const ids = { gw_request_id: headerOf(request, 'gw-request-id'), gw_agent_id: headerOf(request, 'gw-agent-id') };
      logger.info({ reqId: request.id, ...ids, status: reply.statusCode }, 'gateway request');
      done();
    });
  }
  refuseUnservedModels(scope);
  await scope.register(apiScope, { container, strategy, routes: GATEWAY_ROUTE_MODULES, policy: gatewayPolicy(container, scope.prefix) });
};

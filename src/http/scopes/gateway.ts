/**
 * `/gateway/v1`: the same route modules as `/v1` (chat completions, responses,
 * embeddings), admitted by the intermediary's signature and paid by the intermediary.
 * Everything the gateway's wire does differently is declared here, on the scope, never in
 * the shared handlers: the models a route serves, error statuses (420 for an input over
 * the model's limit), its variant of the Responses wire's errors (a client error is a
 * failed Responses object), `gw-usage` as
 * a trailer on streams and in the final usage chunk, a rate limit per agent, the
 * intermediary's request id echoed, and one access-log line per call with its ids.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../domain/shared/clock.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { GatewayStrategy, type GatewayStrategyOptions } from '../auth/gateway-strategy.js';
import { failedResponseErrors, RESPONSES_ERRORS } from '../../wire/responses/errors.js';
import type { BoundRoutes } from '../route-module.js';
import type { RateLimiter } from '../../domain/identity/rate-limiter.port.js';
import type { ScopeDeclaration } from './api-scope.js';

const PREFIX = '/gateway/v1';

/** Routes of this scope that serve fewer models than on `/v1` (spec: Gateway routes). */
const MODELS_BY_ROUTE: ReadonlyMap<string, ReadonlySet<string>> = new Map([['/embeddings', new Set(['all-minilm-l6-v2', 'bge-small-en-v1.5'])]]);

export interface GatewayScopeDeps {
  strategy: GatewayStrategyOptions;
  /** Requests per minute per agent (`gateway.rate_limit_rpm`). */
  rateLimiter: RateLimiter;
  requestsPerMinute: number;
  clock: Clock;
  /** The root logger, for the access log. */
  logger: Logger;
}

export interface GatewayRoutes {
  chatCompletions: BoundRoutes;
  responses: BoundRoutes;
  embeddings: BoundRoutes;
}

/** The stream event that reports the call's usage: chat's usage chunk, or a response's last event. */
const FINAL_RESPONSE_EVENTS: ReadonlySet<unknown> = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const carriesUsage = (event: Record<string, unknown>): boolean =>
  (typeof event.usage === 'object' && event.usage !== null) || FINAL_RESPONSE_EVENTS.has(event.type);

export function gatewayScope(deps: GatewayScopeDeps, routes: GatewayRoutes): ScopeDeclaration {
  return {
    prefix: PREFIX,
    strategy: new GatewayStrategy(deps.strategy),
    routes: [routes.chatCompletions, routes.responses, routes.embeddings],
    policy: {
      rateLimit: {
        limiter: deps.rateLimiter,
        requestsPerMinute: deps.requestsPerMinute,
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
      // other client errors of the Responses wire are a failed Responses object.
      wireErrorVariants: new Map([[RESPONSES_ERRORS, failedResponseErrors(() => toUnixSeconds(deps.clock.nowMs()))]]),
      trailers: ['gw-usage'],
      streamEventFields: (_request, event, trailers) =>
        carriesUsage(event) && trailers['gw-usage'] !== undefined ? { ...event, gw_usage: trailers['gw-usage'] } : event,
      // The intermediary's request id comes back on every answer, for its own correlation.
      echoHeaders: ['gw-request-id'],
      // The intermediary's ids beside Sluice's, one line per call.
      accessLog: { logger: deps.logger, message: 'gateway request', headers: { gw_request_id: 'gw-request-id', gw_agent_id: 'gw-agent-id' } },
      modelsByRoute: MODELS_BY_ROUTE,
    },
  };
}

/**
 * `/gateway/v1`: the same route modules as `/v1` (chat completions, responses,
 * embeddings), admitted by the intermediary's signature and paid by the intermediary.
 * What the gateway's wire does differently is declared here, on the scope, never in the
 * shared handlers: which models a route serves, its error bodies and statuses, its
 * trailers, its rate limit.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Container } from '../../../container.js';
import { modelNotFound } from '../../../inference/registry.js';
import { GatewayStrategy } from '../../auth/gateway-strategy.js';
import { headerOf } from '../../auth/strategy.js';
import { apiScope, type RouteModule } from '../api-scope.js';
import { registerChatCompletionsRoute } from '../v1/chat-completions.js';
import { registerEmbeddingsRoute } from '../v1/embeddings.js';
import { registerResponsesRoute } from '../v1/responses.js';

export const GATEWAY_ROUTE_MODULES: readonly RouteModule[] = [registerChatCompletionsRoute, registerResponsesRoute, registerEmbeddingsRoute];

/** Routes of this scope that serve fewer models than on `/v1` (spec: Gateway routes). */
const MODELS_BY_ROUTE: ReadonlyMap<string, ReadonlySet<string>> = new Map([['/embeddings', new Set(['all-minilm-l6-v2', 'bge-small-en-v1.5'])]]);

function refuseUnservedModel(prefix: string) {
  const byUrl = new Map([...MODELS_BY_ROUTE].map(([path, models]) => [prefix + path, models]));
  return (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
    const models = byUrl.get(request.routeOptions.url ?? '');
    const model = (request.body as { model?: unknown } | null)?.model;
    if (models && typeof model === 'string' && !models.has(model)) return done(modelNotFound(model));
    done();
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
  scope.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { gw_request_id: headerOf(request, 'gw-request-id'), gw_agent_id: headerOf(request, 'gw-agent-id'), status: reply.statusCode },
      'gateway request',
    );
    done();
  });
  scope.addHook('preHandler', refuseUnservedModel(scope.prefix));
  // Until the seam's reply channel lands in callerAuth: settlement headers onto JSON answers.
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.caller && !request.caller.reply) request.caller.reply = { set: (headers) => void reply.headers(headers) };
    done();
  });
  await scope.register(apiScope, { container, strategy, routes: GATEWAY_ROUTE_MODULES });
};

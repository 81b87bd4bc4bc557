/**
 * Every error and every unknown route leaves through here, in the spec's envelope, or in
 * the error body of the scope whose route failed: statuses come from the default table,
 * then the scope's overrides (scope-policy.ts), then the route's own (route config
 * `statusOverrides`, e.g. the decision route's 402 for `insufficient_quota`).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import { toHttpError, appErrorToHttp, type StatusOverrides } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Statuses this route answers differently from its scope. */
    statusOverrides?: StatusOverrides;
  }
}

export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toHttpError(error);
  return reply.code(mapped.status).headers(mapped.headers).type('application/json').send(mapped.body);
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a URL that cannot be
 * decoded, an over-long parameter) would otherwise bypass the hooks, leaving the
 * response without `x-request-id` and outside the envelope.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  sendError(reply, error);
}

/**
 * A route's own statuses (the decision route's wire), under its scope's: the scope owns its
 * policy, so a refusal the scope's strategy makes (the console's CSRF 403) keeps the
 * status the scope declares on every route it mounts.
 */
function overridesOf(request: FastifyRequest): StatusOverrides | undefined {
  const { scope, statusOverrides } = request.routeOptions.config;
  if (!statusOverrides) return scope?.statusOverrides;
  return scope?.statusOverrides ? { ...statusOverrides, ...scope.statusOverrides } : statusOverrides;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toHttpError(error, overridesOf(request));
    const errorBody = request.routeOptions.config.scope?.errorBody;
    if (errorBody) mapped.body = errorBody(request, mapped.error, mapped);
    if (mapped.serverFault) {
      request.log.error({ err: error, request_id: request.id }, 'request failed');
    } else if (mapped.status === 503) {
      request.log.warn({ status: mapped.status, code: mapped.code, reason: (error as Error).message }, 'request refused: not available');
    } else {
      request.log.info({ status: mapped.status, code: mapped.code }, 'request rejected');
    }
    return reply.code(mapped.status).headers(mapped.headers).type('application/json').send(mapped.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new AppError('not_found', `Unknown route: ${request.method} ${request.url.split('?')[0]}`, {
      code: 'unknown_route',
    });
    const mapped = appErrorToHttp(error);
    return reply.code(mapped.status).type('application/json').send(mapped.body);
  });
}

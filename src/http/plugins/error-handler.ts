/**
 * Every error and every unknown route leaves through here: in the error format of the
 * route that failed (route-errors.ts; OpenAI's envelope by default), with its scope's own
 * shape for the scope's refusals (scope policy `errorBody`). Statuses come from the
 * default table, then the route's own (route config `statusOverrides`, e.g. the decision
 * route's 402 for `insufficient_quota`), then the scope's overrides (scope-policy.ts).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import { toHttpError } from '../errors.js';
import { errorContextOf } from '../route-errors.js';

/** An error answered outside any route (before routing, or on an unknown one): OpenAI's envelope. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toHttpError(error, { request: reply.request });
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

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toHttpError(error, errorContextOf(request));
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
    const mapped = toHttpError(error, { request });
    return reply.code(mapped.status).type('application/json').send(mapped.body);
  });
}

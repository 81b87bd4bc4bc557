/** Every error and every unknown route leaves through here, in the spec's envelope. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import { toHttpError, appErrorToHttp, type StatusOverrides } from '../errors.js';

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

/** The error handler of `scope` (and the scopes inside it), with the scope's own statuses. */
export function setScopeErrorHandler(scope: FastifyInstance, overrides?: StatusOverrides): void {
  scope.setErrorHandler((error, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toHttpError(error, overrides);
    if (mapped.serverFault) {
      request.log.error({ err: error, request_id: request.id }, 'request failed');
    } else if (mapped.status === 503) {
      request.log.warn({ status: mapped.status, code: mapped.code, reason: (error as Error).message }, 'request refused: not available');
    } else {
      request.log.info({ status: mapped.status, code: mapped.code }, 'request rejected');
    }
    return reply.code(mapped.status).headers(mapped.headers).type('application/json').send(mapped.body);
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  setScopeErrorHandler(app);

  app.setNotFoundHandler((request, reply) => {
    const error = new AppError('not_found', `Unknown route: ${request.method} ${request.url.split('?')[0]}`, {
      code: 'unknown_route',
    });
    const mapped = appErrorToHttp(error);
    return reply.code(mapped.status).type('application/json').send(mapped.body);
  });
}

/**
 * The storefront's error bodies: its own refusals carry `{error: "<code>", …}` already
 * (AppError.challenge); anything else (a body the parser refused, a schema failure)
 * becomes `400 {error: "invalid_request", message}`, and a server fault
 * `500 {error: {message, type}}`.
 */
import type { FastifyInstance } from 'fastify';
import { isAppError } from '../../../domain/shared/errors.js';
import { toHttpError } from '../../errors.js';

export function setStorefrontErrorHandler(scope: FastifyInstance): void {
  scope.setErrorHandler((error, request, reply) => {
    const mapped = toHttpError(error);
    let body = mapped.body;
    const ownBody = isAppError(error) && error.challenge?.body !== undefined;
    if (!ownBody && mapped.status >= 500) body = { error: { message: 'Internal server error', type: 'internal_error' } };
    else if (!ownBody) {
      const message = (mapped.body as { error?: { message?: string } }).error?.message ?? 'Invalid request';
      body = { error: mapped.status === 404 ? 'not_found' : 'invalid_request', message };
    }
    if (mapped.serverFault) request.log.error({ err: error, request_id: request.id }, 'storefront request failed');
    return reply.code(mapped.status).headers(mapped.headers).type('application/json').send(body);
  });
}

/** POST /v1/moderations. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import { MODERATIONS_ROUTE } from '../../../domain/inference/moderations.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Classify text against the 13 moderation categories',
  body: { type: 'object', description: 'input (string, array of strings, or text parts), model (optional)' },
};

export function registerModerationsRoute(scope: FastifyInstance, container: Container): void {
  const service = container.inference.moderations;
  scope.post('/moderations', { schema }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: MODERATIONS_ROUTE }),
  );
}

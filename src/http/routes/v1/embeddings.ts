/** POST /v1/embeddings. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import { EMBEDDINGS_ROUTE } from '../../../domain/inference/embeddings.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create embeddings (one vector per input)',
  body: { type: 'object', description: 'model, input (string or array of strings), encoding_format (float|base64), dimensions' },
};

export function registerEmbeddingsRoute(scope: FastifyInstance, container: Container): void {
  const service = container.inference.embeddings;
  scope.post('/embeddings', { schema }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: EMBEDDINGS_ROUTE }),
  );
}

/** POST /v1/embeddings. */
import type { FastifyInstance } from 'fastify';
import type { EmbeddingsService } from '../../../domain/completions/embeddings.service.js';
import { EMBEDDINGS_ROUTE } from '../../../domain/completions/embeddings.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { EmbeddingList } from '../../schemas/embeddings.js';
import { EmbeddingsBody, type EmbeddingsRequestBody } from '../../../wire/embeddings.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create embeddings (one vector per input)',
  body: EmbeddingsBody,
  response: { 200: EmbeddingList },
};

export function registerEmbeddingsRoute(scope: FastifyInstance, { embeddings: service }: { embeddings: EmbeddingsService }): void {
  scope.post<{ Body: EmbeddingsRequestBody }>('/embeddings', { schema, validatorCompiler: wireValidatorCompiler, ...serializeAsBefore }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: EMBEDDINGS_ROUTE }),
  );
}

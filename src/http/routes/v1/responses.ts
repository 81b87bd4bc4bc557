/** POST /v1/responses. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import { RESPONSES_ROUTE } from '../../../domain/inference/responses.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a model response (OpenAI Responses shape)',
  body: { type: 'object', description: 'model, input, instructions, max_output_tokens, metadata, temperature, top_p, truncation' },
};

export function registerResponsesRoute(scope: FastifyInstance, container: Container): void {
  const service = container.inference.responses;
  scope.post('/responses', { schema }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: RESPONSES_ROUTE }),
  );
}

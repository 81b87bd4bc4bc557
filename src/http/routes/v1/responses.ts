/** POST /v1/responses. */
import type { FastifyInstance } from 'fastify';
import type { ResponsesService } from '../../../domain/completions/responses.service.js';
import { RESPONSES_ROUTE } from '../../../domain/completions/responses.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ResponseObject, ResponsesBody } from '../../schemas/responses.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a model response (OpenAI Responses shape)',
  body: ResponsesBody,
  response: { 200: ResponseObject },
};

export function registerResponsesRoute(scope: FastifyInstance, { responses: service }: { responses: ResponsesService }): void {
  scope.post('/responses', { schema, ...serializeAsBefore }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: RESPONSES_ROUTE }),
  );
}

/** POST /v1/responses. */
import type { FastifyInstance } from 'fastify';
import type { ResponsesEngine } from '../../../domain/responses/stored-responses.js';
import { RESPONSES_ROUTE } from '../../../domain/completions/responses.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ResponseObject } from '../../schemas/responses.js';
import { ResponsesBody, type ResponsesRequestBody } from '../../../wire/responses.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a model response (OpenAI Responses shape)',
  body: ResponsesBody,
  response: { 200: ResponseObject },
};

export function registerResponsesRoute(scope: FastifyInstance, { responses: service }: { responses: Pick<ResponsesEngine, 'create'> }): void {
  scope.post<{ Body: ResponsesRequestBody }>('/responses', { schema, validatorCompiler: wireValidatorCompiler, ...serializeAsBefore }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: RESPONSES_ROUTE }),
  );
}

/** POST /v1/responses: JSON, or SSE with `stream: true` (named events, each with a sequence_number). */
import type { FastifyInstance } from 'fastify';
import type { ResponsesService } from '../../../domain/responses/responses.service.js';
import { RESPONSES_ROUTE } from '../../../domain/responses/responses.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ResponseObject, ResponseStreamEvent } from '../../schemas/responses.js';
import { ResponsesBody, type ResponsesRequestBody } from '../../../wire/responses.js';
import { RESPONSES_ERRORS } from '../../../wire/responses/errors.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { STREAM_EVENT } from '../../openapi-document.js';
import { clientAbortSignal, sendSse } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a model response (OpenAI Responses shape; `stream: true` for SSE)',
  body: ResponsesBody,
  response: { 200: ResponseObject },
  // Documented only: a stream is written by sendSse, not serialized from this schema.
  [STREAM_EVENT]: ResponseStreamEvent,
};

export function registerResponsesRoute(scope: FastifyInstance, { responses: service }: { responses: Pick<ResponsesService, 'create' | 'open'> }): void {
  scope.post<{ Body: ResponsesRequestBody }>('/responses', { schema, validatorCompiler: wireValidatorCompiler, config: { wireErrors: RESPONSES_ERRORS }, ...serializeAsBefore }, async (request, reply) => {
    const caller = callerOf(request);
    const signal = clientAbortSignal(reply);
    const context = { requestId: request.id, signal, route: RESPONSES_ROUTE };
    if (request.body.stream === true) return sendSse(reply, service.open(caller, request.body, context), signal, { named: true });
    return service.create(caller, request.body, context);
  });
}

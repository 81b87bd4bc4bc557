/** POST /v1/completions: the legacy text route, JSON or SSE with `stream: true`. */
import type { FastifyInstance } from 'fastify';
import type { CompletionsService } from '../../../wire/completions/service.js';
import { COMPLETIONS_ROUTE } from '../../../wire/completions/service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { TextCompletion } from '../../schemas/completions.js';
import { CompletionBody, type CompletionRequestBody } from '../../../wire/completions.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { STREAM_EVENT } from '../../openapi-document.js';
import { clientAbortSignal, sendSse } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a text completion (legacy; chat models served by an upstream engine; `stream: true` for SSE)',
  body: CompletionBody,
  response: { 200: TextCompletion },
  // Documented only: a stream is written by sendSse, not serialized from this schema.
  [STREAM_EVENT]: TextCompletion,
};

export function registerCompletionsRoute(scope: FastifyInstance, { completions: service }: { completions: CompletionsService }): void {
  scope.post<{ Body: CompletionRequestBody }>('/completions', { schema, validatorCompiler: wireValidatorCompiler }, async (request, reply) => {
    const caller = callerOf(request);
    const signal = clientAbortSignal(reply);
    const context = { requestId: request.id, signal, route: COMPLETIONS_ROUTE };
    if (request.body.stream === true) {
      return sendSse(reply, service.openStream(caller, request.body, context), signal);
    }
    return service.create(caller, request.body, context);
  });
}

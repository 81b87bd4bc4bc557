/** POST /v1/chat/completions: JSON, or SSE with `stream: true`. */
import type { FastifyInstance } from 'fastify';
import type { ChatCompletionsService } from '../../../wire/chat-completions/service.js';
import { CHAT_ROUTE } from '../../../wire/chat-completions/service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { ChatCompletionChunk, ChatCompletionObject } from '../../schemas/chat-completions.js';
import { ChatCompletionBody, type ChatCompletionRequestBody } from '../../../wire/chat-completions.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { STREAM_EVENT } from '../../openapi-document.js';
import { clientAbortSignal, sendSse } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Create a chat completion (OpenAI-compatible; `stream: true` for SSE)',
  body: ChatCompletionBody,
  response: { 200: ChatCompletionObject },
  // Documented only: a stream is written by sendSse, not serialized from this schema.
  [STREAM_EVENT]: ChatCompletionChunk,
};

export function registerChatCompletionsRoute(scope: FastifyInstance, { chat: service }: { chat: ChatCompletionsService }): void {
  scope.post<{ Body: ChatCompletionRequestBody }>('/chat/completions', { schema, validatorCompiler: wireValidatorCompiler }, async (request, reply) => {
    const caller = callerOf(request);
    const signal = clientAbortSignal(reply);
    const context = { requestId: request.id, signal, route: CHAT_ROUTE };
    if (request.body.stream === true) {
      return sendSse(reply, service.openStream(caller, request.body, context), signal);
    }
    return service.create(caller, request.body, context);
  });
}

/**
 * POST /v1/systemone, the System One decision route. Mounted in a scope of its own
 * (`v1/index.ts`) because its statuses differ from the other /v1 routes: 402 for
 * `insufficient_quota` and 401 for an invalid key. Its JSON parser answers malformed JSON
 * with FastAPI's 422, as System One does; every response carries `x-typesafe-request-id`
 * (the request id), which System One SDKs log.
 */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import { malformedJson, unprocessable } from '../../../domain/decision/validation.js';
import { callerOf } from '../../auth/caller-auth.js';
import { documentOnly } from '../../schemas/document-only.js';
import { DecisionBody, DecisionResponse, ValidationErrorBody } from '../../schemas/decision.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['decision'],
  summary: 'Answer up to 16 named yes/no, choice and score questions about one state (System One wire format)',
  body: DecisionBody,
  response: { 200: DecisionResponse, 422: ValidationErrorBody },
};

export function registerDecisionRoute(scope: FastifyInstance, container: Container): void {
  // onSend: also on refusals (401, 402, 422), which end before a handler runs.
  scope.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-typesafe-request-id', request.id);
    done(null, payload);
  });
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(unprocessable([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]), undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(malformedJson(text, err), undefined);
    }
  });
  scope.post('/systemone', { schema, ...documentOnly }, async (request, reply) =>
    container.decision.decide(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply) }),
  );
}

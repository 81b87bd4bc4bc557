/**
 * POST /v1/systemone, the System One decision route. Mounted in a scope of its own
 * (`v1/index.ts`) because its statuses differ from the other /v1 routes: 402 for
 * `insufficient_quota` and 401 for an invalid key. Its JSON parser answers malformed JSON
 * with FastAPI's 422, as System One does; every response carries `x-typesafe-request-id`
 * (the request id), which System One SDKs log. Answers are keyed in request order, names
 * that look like numbers included (see json-key-order.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../../container.js';
import type { DecisionResponse as Decided } from '../../../domain/decision/decision.service.js';
import { malformedJson, tooDeepJson, unprocessable } from '../../../domain/decision/validation.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../../domain/shared/json-depth.js';
import { memberKeyOrder } from '../../../domain/shared/json-key-order.js';
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

/** Question names in the order the request listed them, kept only where a parsed object would lose it. */
const questionOrder = new WeakMap<FastifyRequest, string[]>();
const INTEGER_LIKE = /^(0|[1-9]\d*)$/;

/** Record the questions' order when some names are integer-like (JavaScript would list those first). */
function keepQuestionOrder(request: FastifyRequest, text: string, body: unknown): void {
  const questions = (body as { questions?: unknown } | null)?.questions;
  if (typeof questions !== 'object' || questions === null || Array.isArray(questions)) return;
  if (!Object.keys(questions).some((name) => INTEGER_LIKE.test(name))) return;
  const order = memberKeyOrder(text, 'questions');
  if (order) questionOrder.set(request, order);
}

/** The response as JSON, its answers in `order` (every name of a successful request is in it). */
function inRequestOrder(decided: Decided, order: readonly string[]): string {
  const answers = order.map((name) => `${JSON.stringify(name)}:${JSON.stringify(decided.answers[name])}`);
  return `{"model":${JSON.stringify(decided.model)},"answers":{${answers.join(',')}},"usage":${JSON.stringify(decided.usage)}}`;
}

export function registerDecisionRoute(scope: FastifyInstance, container: Container): void {
  // onSend: also on refusals (401, 402, 422), which end before a handler runs.
  scope.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-typesafe-request-id', request.id);
    done(null, payload);
  });
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(unprocessable([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]), undefined);
    // Bounded as every JSON body is: deeper state would overflow the stack when read as text.
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) return done(tooDeepJson(MAX_JSON_DEPTH), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return done(malformedJson(text, err), undefined);
    }
    keepQuestionOrder(request, text, parsed);
    done(null, parsed);
  });
  scope.post('/systemone', { schema, ...documentOnly }, async (request, reply) => {
    const order = questionOrder.get(request);
    const decided = await container.decision.decide(callerOf(request), request.body, {
      requestId: request.id,
      signal: clientAbortSignal(reply),
      questionOrder: order,
    });
    if (!order) return decided;
    return reply.type('application/json; charset=utf-8').send(inRequestOrder(decided, order));
  });
}

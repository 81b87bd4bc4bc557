/**
 * POST /v1/systemone, the System One decision route. What it needs of its own lives in a
 * child scope, so it never changes the scope it is mounted in: its statuses differ from the
 * other routes' (402 for `insufficient_quota` and 401 for an invalid key, route config),
 * its JSON parser answers malformed JSON with FastAPI's 422, as System One does, and every
 * response carries `x-typesafe-request-id` (the request id), which System One SDKs log.
 * Answers are keyed in request order, names that look like numbers included
 * (src/domain/decision/key-orders.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DecisionService } from '../../../domain/decision/decision.service.js';
import { malformedJson, tooDeepJson, unprocessable, type KeyOrders } from '../../../domain/decision/validation.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../../domain/shared/json-depth.js';
import { stripByteOrderMark } from '../../../domain/shared/json-syntax.js';
import { decisionJson, keyOrdersOf } from '../../../domain/decision/key-orders.js';
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

/** Key orders the parser recovered from a request's text (key-orders.ts), where parsing lost them. */
const keyOrders = new WeakMap<FastifyRequest, KeyOrders>();

export function registerDecisionRoute(scope: FastifyInstance, deps: { decision: DecisionService }): void {
  scope.register(decisionScope, deps);
}

/** The spec's statuses of POST /systemone where they differ from the default table. */
export const DECISION_STATUSES = { insufficient_quota: 402, permission: 401 } as const;

async function decisionScope(scope: FastifyInstance, { decision }: { decision: DecisionService }): Promise<void> {
  // onSend: also on refusals (401, 402, 422), which end before a handler runs.
  scope.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-typesafe-request-id', request.id);
    done(null, payload);
  });
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = stripByteOrderMark(body as string);
    if (text.trim() === '') return done(unprocessable([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]), undefined);
    // Bounded as every JSON body is: deeper state would overflow the stack when read as text.
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) return done(tooDeepJson(MAX_JSON_DEPTH), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(malformedJson(text), undefined);
    }
    const orders = keyOrdersOf(text, parsed);
    if (orders) keyOrders.set(request, orders);
    done(null, parsed);
  });
  scope.post('/systemone', { schema, ...documentOnly, config: { statusOverrides: DECISION_STATUSES } }, async (request, reply) => {
    const orders = keyOrders.get(request);
    const decided = await decision.decide(callerOf(request), request.body, {
      requestId: request.id,
      signal: clientAbortSignal(reply),
      keyOrders: orders,
    });
    if (!orders) return decided;
    return reply.type('application/json; charset=utf-8').send(decisionJson(decided, orders));
  });
}

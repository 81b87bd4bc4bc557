/**
 * /v1/systemone as a batch endpoint: each line is decided by the decision service, its
 * body read by the route's own reader (FastAPI's 422s become the line's error), and its
 * answer keyed in request order as the route keys it, integer-like names included (read
 * from the line's text, where the body sits at `body`).
 */
import type { BatchEndpoint } from '../batches/batch-endpoints.js';
import type { DecisionService } from './decision.service.js';
import { decisionJson, keyOrdersOf } from './key-orders.js';

export function decisionBatchEndpoint(decision: DecisionService): BatchEndpoint {
  return {
    prepare(body, lineText) {
      const keyOrders = keyOrdersOf(lineText, body, ['body']) ?? undefined;
      return async (caller, context) => {
        const decided = await decision.decide(caller, body, { ...context, keyOrders });
        return keyOrders ? { body: decided, json: decisionJson(decided, keyOrders) } : { body: decided };
      };
    },
  };
}

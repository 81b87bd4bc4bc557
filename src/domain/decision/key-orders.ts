/**
 * The decision route's answers in request order, names that look like numbers included.
 * JavaScript lists integer-like keys ("2", "10") first and numerically in every object,
 * JSON.parse's and JSON.stringify's alike, so question names and choice criteria named
 * that way would come back reordered. Their order is read from the request's text
 * (json-key-order.ts), only when such names occur, and the answer is written by hand in
 * that order: by the route, and by a batch line on /v1/systemone (whose body sits at
 * `body` in its line's text).
 */
import type { DecisionResponse } from './decision.service.js';
import type { KeyOrders } from './validation.js';
import { keyOrderAt } from '../shared/json-key-order.js';

const INTEGER_LIKE = /^(0|[1-9]\d*)$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasIntegerLikeKey = (value: Record<string, unknown>): boolean => Object.keys(value).some((key) => INTEGER_LIKE.test(key));

/** The orders parsing lost in `body` (parsed from `text`, where it sits at `root`), or null when it lost none. */
export function keyOrdersOf(text: string, body: unknown, root: readonly string[] = []): KeyOrders | null {
  const questions = isPlainObject(body) ? body.questions : undefined;
  if (!isPlainObject(questions)) return null;
  const orders: { questions?: string[]; criteria?: Map<string, string[]> } = {};
  if (hasIntegerLikeKey(questions)) orders.questions = keyOrderAt(text, [...root, 'questions']) ?? undefined;
  for (const [name, question] of Object.entries(questions)) {
    const criteria = isPlainObject(question) ? question.criteria : undefined;
    if (!isPlainObject(criteria) || !hasIntegerLikeKey(criteria)) continue;
    const order = keyOrderAt(text, [...root, 'questions', name, 'criteria']);
    if (order) (orders.criteria ??= new Map()).set(name, order);
  }
  return orders.questions || orders.criteria ? orders : null;
}

/** `values` as a JSON object, its keys in `order`. */
function orderedObject(values: Record<string, unknown>, order: readonly string[]): string {
  return `{${order.map((key) => `${JSON.stringify(key)}:${JSON.stringify(values[key])}`).join(',')}}`;
}

/** The response as JSON: answers in the questions' order, each choice's probabilities in its criteria's. */
export function decisionJson(decided: DecisionResponse, orders: KeyOrders): string {
  const names = orders.questions ?? Object.keys(decided.answers);
  const answers = names.map((name) => {
    const answer = decided.answers[name] as unknown as Record<string, unknown>;
    const criteria = orders.criteria?.get(name);
    const fields = Object.entries(answer).map(([field, value]) => {
      const json = field === 'probabilities' && criteria ? orderedObject(value as Record<string, unknown>, criteria) : JSON.stringify(value);
      return `${JSON.stringify(field)}:${json}`;
    });
    return `${JSON.stringify(name)}:{${fields.join(',')}}`;
  });
  return `{"model":${JSON.stringify(decided.model)},"answers":{${answers.join(',')}},"usage":${JSON.stringify(decided.usage)}}`;
}

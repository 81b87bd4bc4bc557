/**
 * Reads a decision request body (`POST /v1/systemone`) and lists EVERY way it fails, in
 * the shape FastAPI answers (`422 {"detail": [{type, loc, msg, input, ctx?}]}`), because
 * System One clients and SDKs parse that shape. Written by hand rather than with a JSON
 * Schema validator: Fastify's Ajv stops at the first error and words errors its own way,
 * and pydantic's union and discriminator errors (one entry per union member, tag errors)
 * have no Ajv equivalent.
 *
 * Caller-chosen question names are kept in a Map (never used as object keys here).
 */
import { AppError } from '../shared/errors.js';
import { jsonErrorPlace, placeAndReason } from '../shared/json-position.js';

export const MAX_QUESTIONS = 16;
export const MAX_CRITERIA = 32;
export const QUESTION_TYPES = ['noul', 'choice', 'score'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** Free-form text: string, object or array (objects and arrays are read as their JSON). */
export type FreeText = string | Record<string, unknown> | unknown[];

export interface NoulQuestion {
  type: 'noul';
  instructions: FreeText | null;
  criteria: { true: FreeText | null; false: FreeText | null } | null;
}
export interface ChoiceQuestion {
  type: 'choice';
  instructions: FreeText | null;
  /** Choice name → description (null: the name alone), in request order. */
  criteria: Array<{ name: string; description: FreeText | null }>;
}
export interface ScoreQuestion {
  type: 'score';
  instructions: FreeText | null;
  /** Levels, low end first; a level's index is its score. */
  criteria: FreeText[];
}
export type DecisionQuestion = NoulQuestion | ChoiceQuestion | ScoreQuestion;

export interface DecisionRequest {
  model: string;
  state: FreeText;
  questions: Map<string, DecisionQuestion>;
}

export type Loc = Array<string | number>;
export interface ValidationDetail {
  type: string;
  loc: Loc;
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** The 422 of the decision route: its body is FastAPI's, not the error envelope. */
export function unprocessable(detail: ValidationDetail[]): AppError {
  const first = detail[0];
  const message = first ? `${first.loc.join('.')}: ${first.msg}` : 'Request validation failed';
  return new AppError('unprocessable', message, { code: 'validation_error', challenge: { body: { detail } } });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFreeText = (v: unknown): v is FreeText => typeof v === 'string' || (typeof v === 'object' && v !== null);
const own = (o: Record<string, unknown>, key: string): unknown => (Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined);

class Issues {
  readonly list: ValidationDetail[] = [];
  add(type: string, loc: Loc, msg: string, input: unknown, ctx?: Record<string, unknown>): void {
    const detail: ValidationDetail = { type, loc, msg, input };
    if (ctx) detail.ctx = ctx;
    this.list.push(detail);
  }
  missing(loc: Loc, parent: unknown): void {
    this.add('missing', loc, 'Field required', parent);
  }
  /** pydantic's errors for a value outside `str | dict | list` (one per member of the union). */
  notFreeText(loc: Loc, input: unknown): void {
    this.add('string_type', [...loc, 'str'], 'Input should be a valid string', input);
    this.add('dict_type', [...loc, 'dict[str,any]'], 'Input should be a valid dictionary', input);
    this.add('list_type', [...loc, 'list[any]'], 'Input should be a valid list', input);
  }
  count(loc: Loc, input: unknown, kind: 'Dictionary' | 'List', actual: number, min: number, max: number): boolean {
    if (actual >= min && actual <= max) return true;
    const short = actual < min;
    const bound = short ? min : max;
    const noun = bound === 1 ? 'item' : 'items';
    this.add(
      short ? 'too_short' : 'too_long',
      loc,
      `${kind} should have at ${short ? 'least' : 'most'} ${bound} ${noun} after validation, not ${actual}`,
      input,
      { field_type: kind, [short ? 'min_length' : 'max_length']: bound, actual_length: actual },
    );
    return false;
  }
}

/** An optional free-form field (`instructions`, noul criteria texts): absent or null is null. */
function optionalFreeText(issues: Issues, holder: Record<string, unknown>, key: string, loc: Loc): FreeText | null {
  const value = own(holder, key);
  if (value === undefined || value === null) return null;
  if (!isFreeText(value)) {
    issues.notFreeText([...loc, key], value);
    return null;
  }
  return value;
}

function readNoul(issues: Issues, q: Record<string, unknown>, loc: Loc, instructions: FreeText | null): NoulQuestion {
  const raw = own(q, 'criteria');
  if (raw === undefined || raw === null) return { type: 'noul', instructions, criteria: null };
  if (!isObject(raw)) {
    issues.add('model_attributes_type', [...loc, 'criteria'], 'Input should be a valid dictionary or object to extract fields from', raw);
    return { type: 'noul', instructions, criteria: null };
  }
  const cLoc = [...loc, 'criteria'];
  return { type: 'noul', instructions, criteria: { true: optionalFreeText(issues, raw, 'true', cLoc), false: optionalFreeText(issues, raw, 'false', cLoc) } };
}

function readChoice(issues: Issues, q: Record<string, unknown>, loc: Loc, instructions: FreeText | null, order: readonly string[] | undefined): ChoiceQuestion {
  const raw = own(q, 'criteria');
  const cLoc = [...loc, 'criteria'];
  const criteria: ChoiceQuestion['criteria'] = [];
  if (raw === undefined) issues.missing(cLoc, q);
  else if (!isObject(raw)) issues.add('dict_type', cLoc, 'Input should be a valid dictionary', raw);
  else {
    const entries = entriesInOrder(raw, order);
    issues.count(cLoc, raw, 'Dictionary', entries.length, 1, MAX_CRITERIA);
    for (const [name, description] of entries) {
      if (description !== null && !isFreeText(description)) issues.notFreeText([...cLoc, name], description);
      criteria.push({ name, description: description === null || !isFreeText(description) ? null : description });
    }
  }
  return { type: 'choice', instructions, criteria };
}

function readScore(issues: Issues, q: Record<string, unknown>, loc: Loc, instructions: FreeText | null): ScoreQuestion {
  const raw = own(q, 'criteria');
  const cLoc = [...loc, 'criteria'];
  const criteria: FreeText[] = [];
  if (raw === undefined) issues.missing(cLoc, q);
  else if (!Array.isArray(raw)) issues.add('list_type', cLoc, 'Input should be a valid list', raw);
  else {
    issues.count(cLoc, raw, 'List', raw.length, 1, MAX_CRITERIA);
    raw.forEach((level: unknown, i) => {
      if (isFreeText(level)) criteria.push(level);
      else issues.notFreeText([...cLoc, i], level);
    });
  }
  return { type: 'score', instructions, criteria };
}

function readQuestion(issues: Issues, raw: unknown, loc: Loc, criteriaOrder: readonly string[] | undefined): DecisionQuestion | null {
  if (!isObject(raw)) {
    issues.add('model_attributes_type', loc, 'Input should be a valid dictionary or object to extract fields from', raw);
    return null;
  }
  const type = own(raw, 'type');
  if (type === undefined) {
    issues.add('union_tag_not_found', loc, "Unable to extract tag using discriminator 'type'", raw, { discriminator: "'type'" });
    return null;
  }
  if (typeof type !== 'string' || !(QUESTION_TYPES as readonly string[]).includes(type)) {
    const expected = QUESTION_TYPES.map((t) => `'${t}'`).join(', ');
    issues.add(
      'union_tag_invalid',
      loc,
      `Input tag '${String(typeof type === 'string' ? type : JSON.stringify(type))}' found using 'type' does not match any of the expected tags: ${expected}`,
      raw,
      { discriminator: "'type'", tag: typeof type === 'string' ? type : JSON.stringify(type), expected_tags: expected },
    );
    return null;
  }
  // The issue's `loc` names the question, not pydantic's tag segment: [..., name, 'criteria'].
  const qLoc = loc;
  const instructions = optionalFreeText(issues, raw, 'instructions', qLoc);
  if (type === 'noul') return readNoul(issues, raw, qLoc, instructions);
  if (type === 'choice') return readChoice(issues, raw, qLoc, instructions, criteriaOrder);
  return readScore(issues, raw, qLoc, instructions);
}

/**
 * Key orders as the request's text listed them, where parsing lost them (integer-like
 * names, which JavaScript lists first and numerically): the questions' names, and the
 * criteria names of each choice question (by question name).
 */
export interface KeyOrders {
  questions?: readonly string[];
  criteria?: ReadonlyMap<string, readonly string[]>;
}

/** `raw`'s entries, in `order` where the caller knows the text's order (integer-like names), else as parsed. */
function entriesInOrder(raw: Record<string, unknown>, order: readonly string[] | undefined): [string, unknown][] {
  if (!order) return Object.entries(raw);
  const names = new Set(order.filter((name) => Object.hasOwn(raw, name)));
  for (const name of Object.keys(raw)) names.add(name);
  return [...names].map((name) => [name, raw[name]]);
}

function readQuestions(issues: Issues, body: Record<string, unknown>, order: KeyOrders): Map<string, DecisionQuestion> {
  const questions = new Map<string, DecisionQuestion>();
  const raw = own(body, 'questions');
  const loc: Loc = ['body', 'questions'];
  if (raw === undefined) {
    issues.missing(loc, body);
    return questions;
  }
  if (!isObject(raw)) {
    issues.add('dict_type', loc, 'Input should be a valid dictionary', raw);
    return questions;
  }
  const entries = entriesInOrder(raw, order.questions);
  issues.count(loc, raw, 'Dictionary', entries.length, 1, MAX_QUESTIONS);
  for (const [name, value] of entries) {
    const question = readQuestion(issues, value, [...loc, name], order.criteria?.get(name));
    if (question) questions.set(name, question);
  }
  return questions;
}

/**
 * The request, or a 422 listing every failure of the body. Questions and choice criteria
 * (and their failures) follow `order` where given (KeyOrders), else the parsed order.
 */
export function readDecisionRequest(body: unknown, order: KeyOrders = {}): DecisionRequest {
  const issues = new Issues();
  if (!isObject(body)) {
    if (body === undefined || body === null) issues.missing(['body'], null);
    else issues.add('model_attributes_type', ['body'], 'Input should be a valid dictionary or object to extract fields from', body);
    throw unprocessable(issues.list);
  }
  const state = own(body, 'state');
  if (state === undefined) issues.missing(['body', 'state'], body);
  else if (!isFreeText(state)) issues.notFreeText(['body', 'state'], state);
  const model = own(body, 'model');
  if (model === undefined) issues.missing(['body', 'model'], body);
  else if (typeof model !== 'string') issues.add('string_type', ['body', 'model'], 'Input should be a valid string', model);
  const questions = readQuestions(issues, body, order);
  if (issues.list.length > 0) throw unprocessable(issues.list);
  return { model: model as string, state: state as FreeText, questions };
}

/**
 * FastAPI's answer to a body that is not JSON: `loc` holds the character position of the
 * fault, as FastAPI's does, and `ctx.error` the line, column and reason in Sluice's words.
 */
export function malformedJson(text: string): AppError {
  const place = jsonErrorPlace(text);
  const index = place?.index ?? 0;
  const error = place ? placeAndReason(place) : 'not valid JSON';
  return unprocessable([{ type: 'json_invalid', loc: ['body', index], msg: 'JSON decode error', input: {}, ctx: { error } }]);
}

/** A body nesting deeper than `limit`: refused before parsing, in the shape of a JSON decode error. */
export function tooDeepJson(limit: number): AppError {
  const error = `JSON nests deeper than ${limit} levels, the limit for request bodies`;
  return unprocessable([{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error } }]);
}

/** Free-form text as the models read it: strings as they are, objects and arrays as JSON. */
export const freeTextString = (value: FreeText): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The JSON body parser for every route, replacing Fastify's default one.
 *
 * - Still secure-json-parse (as Fastify's own): `__proto__` and `constructor.prototype`
 *   keys are refused as Fastify refuses them.
 * - Nesting is bounded (MAX_JSON_DEPTH) on the text before parsing: a 5,000-level body
 *   would otherwise parse, then overflow the stack in JSON.stringify and answer 500.
 * - An empty body is `{}` on routes whose body is wholly optional (no body schema, or one
 *   with properties and nothing required): the OpenAI SDKs send `content-type:
 *   application/json` and no body on `POST /v1/batches/{id}/cancel`. Elsewhere it is 400.
 * - `text/plain` has no parser: a JSON route called with it answers 400
 *   `invalid_content_type` naming application/json, not a schema error about a string.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from '../../domain/shared/errors.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../domain/shared/json-depth.js';
import { jsonErrorPlace, placeAndReason } from '../../domain/shared/json-position.js';
import { stripByteOrderMark } from '../../domain/shared/json-syntax.js';

export const tooDeep = () =>
  new AppError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON bodies`, {
    code: 'json_too_deep',
  });

/** secure-json-parse's refusal of `__proto__` and `constructor.prototype` keys. */
const FORBIDDEN_PROTOTYPE = 'Object contains forbidden prototype property';
const emptyBody = () => new AppError('invalid_request', 'Request body is empty; send a JSON object', { code: 'invalid_json' });
/**
 * Where the body stops being JSON, so the client can find the mistake. Valid JSON that
 * secure-json-parse refused has no place: its refusal (a forbidden `__proto__` key) is
 * the library's fixed wording, passed on; anything else the parser said is not.
 */
export function invalidJson(text: string, error: unknown): AppError {
  const place = jsonErrorPlace(text);
  const refusal = error instanceof Error && error.message === FORBIDDEN_PROTOTYPE ? FORBIDDEN_PROTOTYPE : 'not valid JSON';
  const message = place ? `Invalid JSON body at ${placeAndReason(place)}` : `Invalid JSON body: ${refusal}`;
  return new AppError('invalid_request', message, { code: 'invalid_json' });
}

interface BodySchema {
  properties?: unknown;
  required?: readonly string[];
}

/** The route takes no body, or one whose every field is optional. */
function bodyIsOptional(request: FastifyRequest): boolean {
  const body = request.routeOptions.schema?.body as BodySchema | undefined;
  if (!body) return true;
  return body.properties !== undefined && (body.required ?? []).length === 0;
}

type ParseOptions = { protoAction: 'error' | 'remove' | 'ignore'; constructorAction: 'error' | 'remove' | 'ignore' };

/** The body of `text`, by the rules above; throws the AppError to answer. */
export function parseJsonText(request: FastifyRequest, body: string, options: ParseOptions): unknown {
  // Stripped here rather than by secure-json-parse, so that a fault's column is counted from what was parsed.
  const text = stripByteOrderMark(body);
  if (text.trim() === '') {
    if (bodyIsOptional(request)) return {};
    throw emptyBody();
  }
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return secureJson.parse(text, undefined, options);
  } catch (err) {
    throw invalidJson(text, err);
  }
}

/** The parse options of `app`'s prototype-poisoning settings (Fastify's own defaults: refuse). */
export function jsonParseOptions(app: FastifyInstance): ParseOptions {
  return {
    protoAction: app.initialConfig.onProtoPoisoning ?? 'error',
    constructorAction: app.initialConfig.onConstructorPoisoning ?? 'error',
  };
}

export function registerJsonBody(app: FastifyInstance): void {
  const options = jsonParseOptions(app);
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      done(null, parseJsonText(request, body as string, options));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

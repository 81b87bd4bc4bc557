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

export const tooDeep = () =>
  new AppError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON bodies`, {
    code: 'json_too_deep',
  });

const emptyBody = () => new AppError('invalid_request', 'Request body is empty; send a JSON object', { code: 'invalid_json' });
const invalidJson = () => new AppError('invalid_request', 'Invalid JSON body', { code: 'invalid_json' });

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

export function registerJsonBody(app: FastifyInstance): void {
  const parseOptions = {
    protoAction: app.initialConfig.onProtoPoisoning ?? 'error',
    constructorAction: app.initialConfig.onConstructorPoisoning ?? 'error',
  } as const;
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') {
      if (bodyIsOptional(request)) done(null, {});
      else done(emptyBody(), undefined);
      return;
    }
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(tooDeep(), undefined);
      return;
    }
    try {
      done(null, secureJson.parse(text, undefined, parseOptions));
    } catch {
      done(invalidJson(), undefined);
    }
  });
}

/**
 * A scope is one declaration: route modules mounted under a prefix with the scope's own
 * way of admitting callers (an AuthStrategy, whose callers carry the scope's Meter) and its
 * own policy (scope-policy.ts). `apiScope` mounts a declaration, implementing every policy
 * entry once, so no route module adds a hook, an error handler or a parser of its own; the
 * app mounts its list of declarations with `mountScopes`. E.g. the gateway (scopes/gateway.ts):
 *
 *   {
 *     prefix: '/gateway/v1',
 *     strategy: new GatewayStrategy({ verifier, meter, … }),
 *     routes: [routes.chatCompletions, routes.responses, routes.embeddings],
 *     policy: { rateLimit: { limiter, requestsPerMinute: 120, keyOf: (p) => p.subject ?? '', exceededMessage: '… for this agent' },
 *               security: [{ name: 'GatewaySignature', scheme: { type: 'apiKey', in: 'header', name: 'gw-signature' } }],
 *               echoHeaders: ['gw-request-id'], trailers: ['gw-usage'] },
 *   }
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import { modelNotFound } from '../../domain/models/model-resolver.port.js';
import { registerCallerAuth } from '../auth/caller-auth.js';
import { headerOf, type AuthStrategy } from '../auth/strategy.js';
import { registerScopeCors } from '../plugins/cors.js';
import { declareSecurityScheme } from '../openapi-security.js';
import type { BoundRoutes } from '../route-module.js';
import { serializeAsBefore } from '../schemas/document-only.js';
import type { ScopeAccessLog, ScopePolicy, ScopeTenant } from '../scope-policy.js';

export interface ScopeDeclaration {
  /** Where the scope is mounted (under its parent's prefix, for a nested scope). */
  prefix: string;
  /** How callers are admitted; absent, the scope's routes admit anyone and have no caller. */
  strategy?: AuthStrategy;
  routes: readonly BoundRoutes[];
  policy?: ScopePolicy;
  /** Scopes mounted inside this one: they share its tenant, parsers and hooks, each with its own strategy and policy. */
  scopes?: readonly ScopeDeclaration[];
}

export const apiScope: FastifyPluginAsync<ScopeDeclaration> = async (scope, { strategy, routes, policy = {}, scopes = [] }) => {
  stampPolicy(scope, policy);
  if (policy.cookies) await scope.register(cookie);
  if (policy.forms) parseForms(scope);
  if (policy.echoHeaders) echoHeaders(scope, policy.echoHeaders);
  if (policy.answerHeaders) setAnswerHeaders(scope, policy.answerHeaders);
  if (policy.accessLog) logAccess(scope, policy.accessLog);
  if (policy.tenant) resolveTenant(scope, policy.tenant);
  if (strategy) {
    const publicPaths = policy.publicPaths && new Set(policy.publicPaths.map((path) => `${scope.prefix}${path}`));
    registerCallerAuth(scope, { strategy, rateLimit: policy.rateLimit, publicPaths });
  }
  if (policy.cors) registerScopeCors(scope);
  if (policy.answerFields) {
    const answerFields = policy.answerFields;
    scope.addHook('preSerialization', (request, reply, payload, done) => {
      const answer = payload as Record<string, unknown> | null;
      if (reply.statusCode >= 300 || answer === null || typeof answer !== 'object' || Array.isArray(answer)) return done(null, payload);
      done(null, answerFields(request, reply, answer));
    });
  }
  for (const register of routes) await register(scope);
  for (const child of scopes) await scope.register(apiScope, child);
};

/** Mounts each declaration on the app, in order. */
export async function mountScopes(app: FastifyInstance, scopes: readonly ScopeDeclaration[]): Promise<void> {
  for (const declaration of scopes) await app.register(apiScope, declaration);
}

/** Every route mounted in `scope` (route modules' child scopes included) carries the policy, and its security requirement. */
function stampPolicy(scope: FastifyInstance, policy: ScopePolicy): void {
  const schemes = policy.security ?? [];
  for (const scheme of schemes) declareSecurityScheme(scope, scheme);
  const requirement = schemes.map((s) => ({ [s.name]: [] }));
  // A response schema's serializer drops the fields it does not list: a scope that adds
  // fields to its answers serializes them whole.
  const serializeWhole = policy.answerFields !== undefined;
  const hidden = policy.documented === false;
  const { modelsByRoute } = policy;
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, scope: policy };
    if (hidden) route.schema = { ...route.schema, hide: true };
    if (serializeWhole) route.serializerCompiler = serializeAsBefore.serializerCompiler;
    if (requirement.length > 0 && route.schema && !route.schema.hide) route.schema = { ...route.schema, security: requirement };
    const models = modelsByRoute?.get(route.url.slice(scope.prefix.length));
    if (models) route.preHandler = [route.preHandler ?? [], refuseOtherModels(models)].flat();
  });
}

/** Only the routes that serve fewer models check the requested one: a scope-wide hook would run on every call for nothing. */
const refuseOtherModels =
  (models: ReadonlySet<string>) =>
  (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void => {
    const model = (request.body as { model?: unknown } | null)?.model;
    if (typeof model === 'string' && !models.has(model)) return done(modelNotFound(model));
    done();
  };

/** Form bodies as a null-prototype record; a repeated field keeps its first value. */
function parseForm(text: string): Record<string, string> {
  const form = Object.create(null) as Record<string, string>;
  for (const [name, value] of new URLSearchParams(text)) if (!(name in form)) form[name] = value;
  return form;
}

function parseForms(scope: FastifyInstance): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, parseForm(body as string)));
}

function echoHeaders(scope: FastifyInstance, names: readonly string[]): void {
  scope.addHook('onRequest', (request, reply, done) => {
    for (const name of names) {
      const value = headerOf(request, name);
      if (value !== undefined) reply.header(name, value);
    }
    done();
  });
}

function setAnswerHeaders(scope: FastifyInstance, headers: Readonly<Record<string, string>>): void {
  scope.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(headers);
    done(null, payload);
  });
}

/**
 * Through the given (root) logger: a request's own child logger is made only when
 * something else logs. The level is fixed at start: below info, no hook is added at all.
 */
function logAccess(scope: FastifyInstance, { logger, message, headers }: ScopeAccessLog): void {
  if (!logger.isLevelEnabled('info')) return;
  const fields = Object.entries(headers);
  scope.addHook('onResponse', (request, reply, done) => {
    const line: Record<string, unknown> = { reqId: request.id };
    for (const [field, header] of fields) line[field] = headerOf(request, header);
    line.status = reply.statusCode;
    logger.info(line, message);
    done();
  });
}

/** The tenant is found in onRequest, before the strategy's own hook (registered after this one). */
function resolveTenant(scope: FastifyInstance, tenant: ScopeTenant): void {
  if (!scope.hasRequestDecorator(tenant.property)) scope.decorateRequest(tenant.property, null);
  scope.addHook('onRequest', (request, _reply, done) => {
    try {
      (request as unknown as Record<string, unknown>)[tenant.property] = tenant.resolve(request);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
}

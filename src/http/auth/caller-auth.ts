/**
 * Runs a scope's authentication strategy and its per-caller rate limit, and hands the
 * Caller to the handlers (callerOf). Header strategies run in onRequest, before the body
 * is read; raw-body strategies run in preValidation, with the body parsed from the same
 * bytes they verified.
 *
 * Callback-style, with a synchronous path when the strategy answers at once: this runs on
 * every request, and an async hook with two awaits costs several promise hops.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import { rateLimitKeyOf, type Caller, type Principal } from '../../domain/access/caller.js';
import type { RateDecision, RateLimiter } from '../../storage/rate-limit/rate-limiter.js';
import { jsonParseOptions, parseJsonText } from '../plugins/json-body.js';
import type { AuthStrategy } from './strategy.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** The exact body bytes, in scopes whose strategy needs them. */
    rawBody: Buffer | null;
  }
}

export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new AppError('internal', 'route is missing authentication');
  return request.caller;
}

/** The tenant of the call (files, batches and other per-project objects). */
export const principalOf = (request: FastifyRequest): Principal => callerOf(request).principal;

export interface CallerAuthOptions {
  strategy: AuthStrategy;
  rateLimiter: RateLimiter;
  requestsPerMinute: number;
  /** Paths under the scope that need no credentials. */
  publicPaths?: ReadonlySet<string>;
}

type Done = (err?: Error) => void;

const isPublic = (paths: ReadonlySet<string>, url: string): boolean => {
  const query = url.indexOf('?');
  return paths.has(query === -1 ? url : url.slice(0, query));
};

export function registerCallerAuth(scope: FastifyInstance, options: CallerAuthOptions): void {
  if (!scope.hasRequestDecorator('caller')) scope.decorateRequest('caller', null);
  if (!scope.hasRequestDecorator('rawBody')) scope.decorateRequest('rawBody', null);
  const limit = String(options.requestsPerMinute);
  const { strategy, rateLimiter } = options;

  const decide = (request: FastifyRequest, reply: FastifyReply, caller: Caller, decision: RateDecision, done: Done) => {
    reply.header('x-ratelimit-limit-requests', limit);
    reply.header('x-ratelimit-remaining-requests', String(decision.remaining));
    if (!decision.allowed) {
      done(
        new AppError('rate_limit', 'Rate limit exceeded: too many requests per minute for this API key', {
          code: 'rate_limit_exceeded',
          retryAfterSeconds: decision.retryAfterSeconds,
        }),
      );
      return;
    }
    request.caller = caller;
    done();
  };

  const admit = (request: FastifyRequest, reply: FastifyReply, caller: Caller, done: Done) => {
    let decision: RateDecision | Promise<RateDecision>;
    try {
      decision = rateLimiter.consume(rateLimitKeyOf(caller.principal));
    } catch (err) {
      return done(err as Error);
    }
    if (decision instanceof Promise) decision.then((d) => decide(request, reply, caller, d, done), done);
    else decide(request, reply, caller, decision, done);
  };

  const authenticate = (request: FastifyRequest, reply: FastifyReply, done: Done) => {
    if (request.method === 'OPTIONS') return done();
    if (options.publicPaths && isPublic(options.publicPaths, request.url)) return done();
    let caller: Caller | Promise<Caller>;
    try {
      caller = strategy.authenticate(request);
    } catch (err) {
      return done(err as Error);
    }
    if (caller instanceof Promise) caller.then((found) => admit(request, reply, found, done), done);
    else admit(request, reply, caller, done);
  };

  if (strategy.needs === 'headers') {
    scope.addHook('onRequest', authenticate);
    return;
  }
  // The strategy verifies the exact bytes; the handler's body is parsed from those bytes,
  // by the same rules as every JSON body (nesting bound, prototype keys refused).
  const parseOptions = jsonParseOptions(scope);
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    request.rawBody = bytes;
    try {
      done(null, parseJsonText(request, bytes.toString('utf8'), parseOptions));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  scope.addHook('preValidation', authenticate);
}

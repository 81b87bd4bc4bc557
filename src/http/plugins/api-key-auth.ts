/**
 * Authentication and rate limiting for `/v1`. Runs in onRequest, before the body is
 * read, so an unauthenticated client cannot make the server parse anything.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import type { ApiKeyAuthenticator, Principal } from '../../domain/auth/authenticator.js';
import type { RateDecision, RateLimiter } from '../../storage/rate-limit/rate-limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

/** `x-api-key` wins; `Authorization: Bearer <key>` lets the OpenAI SDKs work unchanged. */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const apiKey = header(request, 'x-api-key');
  if (apiKey) return apiKey.trim();
  const authorization = header(request, 'authorization');
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

const isPublic = (paths: ReadonlySet<string>, url: string): boolean => {
  const query = url.indexOf('?');
  return paths.has(query === -1 ? url : url.slice(0, query));
};

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('internal', 'route is missing authentication');
  return request.principal;
}

export interface ApiKeyAuthOptions {
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  requestsPerMinute: number;
  /** Paths under the prefix that need no key. */
  publicPaths?: ReadonlySet<string>;
}

/**
 * Callback-style, with a synchronous path when the key's lookup is cached: this runs on
 * every request, and an async hook with two awaits costs several promise hops.
 */
export function registerApiKeyAuth(scope: FastifyInstance, options: ApiKeyAuthOptions): void {
  scope.decorateRequest('principal', null);
  const limit = String(options.requestsPerMinute);

  const decide = (request: FastifyRequest, reply: FastifyReply, principal: Principal, decision: RateDecision, done: (err?: Error) => void) => {
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
    request.principal = principal;
    done();
  };

  const admit = (request: FastifyRequest, reply: FastifyReply, principal: Principal, done: (err?: Error) => void) => {
    let decision: RateDecision | Promise<RateDecision>;
    try {
      decision = options.rateLimiter.consume(principal.keyId ?? principal.projectId);
    } catch (err) {
      return done(err as Error);
    }
    if (decision instanceof Promise) decision.then((d) => decide(request, reply, principal, d, done), done);
    else decide(request, reply, principal, decision, done);
  };

  scope.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    if (options.publicPaths && isPublic(options.publicPaths, request.url)) return done();
    const key = presentedApiKey(request);
    const projectId = header(request, 'x-project-id');
    let principal: Principal | undefined;
    try {
      principal = options.authenticator.authenticateCached(key, projectId);
    } catch (err) {
      return done(err as Error);
    }
    if (principal) return admit(request, reply, principal, done);
    options.authenticator.authenticate(key, projectId).then((found) => admit(request, reply, found, done), done);
  });
}

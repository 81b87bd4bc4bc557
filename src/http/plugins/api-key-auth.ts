/**
 * Authentication and rate limiting for `/v1`. Runs in onRequest, before the body is
 * read, so an unauthenticated client cannot make the server parse anything.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import type { ApiKeyAuthenticator, Principal } from '../../domain/auth/authenticator.js';
import type { RateLimiter } from '../../storage/rate-limit/rate-limiter.js';

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

export function registerApiKeyAuth(scope: FastifyInstance, options: ApiKeyAuthOptions): void {
  scope.decorateRequest('principal', null);
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return;
    if (options.publicPaths?.has(request.url.split('?')[0]!)) return;
    const principal = await options.authenticator.authenticate(presentedApiKey(request), header(request, 'x-project-id'));
    const decision = await options.rateLimiter.consume(principal.keyId ?? principal.projectId);
    reply.header('x-ratelimit-limit-requests', String(options.requestsPerMinute));
    reply.header('x-ratelimit-remaining-requests', String(decision.remaining));
    if (!decision.allowed) {
      throw new AppError('rate_limit', 'Rate limit exceeded: too many requests per minute for this API key', {
        code: 'rate_limit_exceeded',
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
    request.principal = principal;
  });
}

/**
 * CORS for browser callers: any origin may call with a key (the key is the credential;
 * no cookies), preflights are answered before authentication, and the request id and
 * rate-limit headers are readable by scripts. A scope may declare its own allowed and
 * exposed headers (scope-policy.ts); its routes, and the preflights of its paths, answer
 * with those.
 *
 * Written here rather than taken from @fastify/cors (same behaviour with `origin: true`),
 * because that plugin copies its options object and sets its headers on every request,
 * browser or not, though SDKs, servers and curl send no Origin header: a measurable share
 * of the proxy path's CPU at saturation (bench/RESULTS-archive.md). Here a request without
 * Origin costs one constant header.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { scopePolicyOf, type ScopeCors } from '../scope-policy.js';

export interface CorsOptions extends ScopeCors {
  methods: readonly string[];
  maxAgeSeconds: number;
}

interface CorsHeaders {
  allowedHeaders: string;
  exposedHeaders: string;
}

const joined = (cors: ScopeCors): CorsHeaders => ({
  allowedHeaders: cors.allowedHeaders.join(', '),
  exposedHeaders: cors.exposedHeaders.join(', '),
});

export function registerCors(app: FastifyInstance, options: CorsOptions): void {
  const methods = options.methods.join(', ');
  const maxAge = String(options.maxAgeSeconds);
  const defaults = joined(options);
  const byScope = new WeakMap<ScopeCors, CorsHeaders>();

  /** The headers of the scope serving `request`, else the defaults. */
  const headersFor = (request: FastifyRequest): CorsHeaders => {
    const cors = scopePolicyOf(request)?.cors;
    if (!cors) return defaults;
    let headers = byScope.get(cors);
    if (!headers) byScope.set(cors, (headers = joined(cors)));
    return headers;
  };

  /** Preflights, and a bare OPTIONS too, get an empty 204 (never the envelope's 404). */
  const answerOptions = (reply: FastifyReply, headers: CorsHeaders | null) => {
    if (headers) {
      reply.header('access-control-allow-methods', methods);
      reply.header('access-control-allow-headers', headers.allowedHeaders);
      reply.header('access-control-max-age', maxAge);
    }
    reply.code(204).header('content-length', '0').send();
  };

  app.addHook('onRequest', (request, reply, done) => {
    // Answers differ by Origin (the allowed origin is echoed), so caches must key on it.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined) {
      if (request.method === 'OPTIONS') return answerOptions(reply, null);
      return done();
    }
    const headers = headersFor(request);
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-expose-headers', headers.exposedHeaders);
    if (request.method === 'OPTIONS') return answerOptions(reply, headers);
    done();
  });

  // Gives OPTIONS a route on every path, so the hook above runs for it.
  app.options('*', { schema: { hide: true } }, (_request, reply) => answerOptions(reply, null));
}

/** Routes the preflights of a scope's paths into the scope, so they answer with its CORS policy. */
export function registerScopeCors(scope: FastifyInstance): void {
  scope.options('/*', { schema: { hide: true } }, (_request, reply) => reply.code(204).header('content-length', '0').send());
}

/**
 * CORS for browser callers: any origin may call with a key (the key is the credential;
 * no cookies), preflights are answered before authentication, and the request id and
 * rate-limit headers are readable by scripts.
 *
 * Written here rather than taken from @fastify/cors (same behaviour with `origin: true`),
 * because that plugin copies its options object and sets its headers on every request,
 * browser or not, though SDKs, servers and curl send no Origin header: a measurable share
 * of the proxy path's CPU at saturation (bench/RESULTS.md). Here a request without
 * Origin costs one constant header.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

export interface CorsOptions {
  methods: readonly string[];
  allowedHeaders: readonly string[];
  exposedHeaders: readonly string[];
  maxAgeSeconds: number;
}

export function registerCors(app: FastifyInstance, options: CorsOptions): void {
  const methods = options.methods.join(', ');
  const allowedHeaders = options.allowedHeaders.join(', ');
  const exposedHeaders = options.exposedHeaders.join(', ');
  const maxAge = String(options.maxAgeSeconds);

  /** Preflights, and a bare OPTIONS too, get an empty 204 (never the envelope's 404). */
  const answerOptions = (reply: FastifyReply, origin: string | undefined) => {
    if (origin !== undefined) {
      reply.header('access-control-allow-methods', methods);
      reply.header('access-control-allow-headers', allowedHeaders);
      reply.header('access-control-max-age', maxAge);
    }
    reply.code(204).header('content-length', '0').send();
  };

  app.addHook('onRequest', (request, reply, done) => {
    // Answers differ by Origin (the allowed origin is echoed), so caches must key on it.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin !== undefined) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', exposedHeaders);
    }
    if (request.method === 'OPTIONS') return answerOptions(reply, origin);
    done();
  });

  // Gives OPTIONS a route on every path, so the hook above runs for it.
  app.options('*', { schema: { hide: true } }, (_request, reply) => answerOptions(reply, undefined));
}

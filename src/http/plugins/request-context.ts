/**
 * Request ids on every response, one log line and metrics per request (count, latency,
 * in-flight), and connection draining on close. Hooks are callback-style: this runs on
 * every request, and async hooks cost Fastify a promise each.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    startedAtNs: bigint;
    countedInFlight: boolean;
    /**
     * Counts and logs the request as answered with `status`, when Fastify never sends its
     * reply: an upgrade to a WebSocket (101), whose socket then lives on its own.
     */
    answered(status: number): void;
  }
}

function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

export function registerRequestContext(app: FastifyInstance, metrics: Metrics): void {
  app.decorateRequest('startedAtNs', 0n);
  app.decorateRequest('countedInFlight', false);
  // The request log's story of the call, on the routes that open one (src/http/call-story.ts).
  app.decorateRequest('callStory', null);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    request.startedAtNs = process.hrtime.bigint();
    request.countedInFlight = true;
    metrics.httpInFlight++;
    done();
  });

  const finish = (request: FastifyRequest, status: number | 'aborted') => {
    if (!request.countedInFlight) return;
    request.countedInFlight = false;
    metrics.httpInFlight--;
    const route = routeLabel(request);
    metrics.httpRequests.inc([route, request.method, String(status)]);
    const seconds = Number(process.hrtime.bigint() - request.startedAtNs) / 1e9;
    metrics.httpDuration.observe([route, request.method], seconds);
    // One line per request (Fastify's own request logging, two lines each, is disabled),
    // through the root logger: the request's own child is made only if something else logs.
    app.log.info(
      { reqId: request.id, method: request.method, url: request.url, status, ms: Math.round(seconds * 1e4) / 10 },
      'request completed',
    );
  };

  app.decorateRequest('answered', function answered(this: FastifyRequest, status: number) {
    finish(this, status);
  });

  // Graceful shutdown: once close() has begun, every response says `connection: close`
  // and its socket is ended, so keep-alive clients do not hold app.close() open until
  // their idle timeout (in-flight requests still finish).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing && !reply.raw.headersSent) reply.header('connection', 'close');
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    if (closing) request.raw.socket?.end();
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, 'aborted');
    done();
  });
}

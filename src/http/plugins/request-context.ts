/** Request ids on every response, request metrics (count, latency, in-flight), and connection draining on close. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    startedAtNs: bigint;
    countedInFlight: boolean;
  }
}

function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

export function registerRequestContext(app: FastifyInstance, metrics: Metrics): void {
  app.decorateRequest('startedAtNs', 0n);
  app.decorateRequest('countedInFlight', false);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    request.startedAtNs = process.hrtime.bigint();
    request.countedInFlight = true;
    metrics.httpInFlight.inc();
  });

  const finish = (request: FastifyRequest, status: number | 'aborted') => {
    if (!request.countedInFlight) return;
    request.countedInFlight = false;
    metrics.httpInFlight.dec();
    const route = routeLabel(request);
    metrics.httpRequests.inc({ route, method: request.method, status: String(status) });
    const seconds = Number(process.hrtime.bigint() - request.startedAtNs) / 1e9;
    metrics.httpDuration.observe({ route, method: request.method }, seconds);
  };

  // Graceful shutdown: once close() has begun, every response says `connection: close`
  // and its socket is ended, so keep-alive clients do not hold app.close() open until
  // their idle timeout (in-flight requests still finish).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing && !reply.raw.headersSent) reply.header('connection', 'close');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    finish(request, reply.statusCode);
    if (closing) request.raw.socket?.end();
  });
  app.addHook('onRequestAbort', async (request) => finish(request, 'aborted'));
}

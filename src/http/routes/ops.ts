/** Liveness, readiness and Prometheus metrics: outside /v1, no API key. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.js';
import { serializeAsBefore } from '../schemas/document-only.js';
import { Health, MetricsText, Readiness } from '../schemas/ops.js';

export function registerOpsRoutes(app: FastifyInstance, container: Container): void {
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } }, ...serializeAsBefore }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true, response: { 200: Readiness, 503: Readiness } }, ...serializeAsBefore }, async (request, reply) => {
    const readiness = await container.readiness();
    if (!readiness.ready) request.log.warn({ readiness }, 'not ready');
    const body: Record<string, unknown> = { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks };
    if (Object.keys(readiness.upstreams).length > 0) body.upstreams = readiness.upstreams;
    if (Object.keys(readiness.runtimes).length > 0) body.runtimes = readiness.runtimes;
    return reply.code(readiness.ready ? 200 : 503).send(body);
  });

  app.get('/metrics', { schema: { hide: true, response: { 200: MetricsText } }, ...serializeAsBefore }, async (_request, reply) => {
    const body = await container.metrics.registry.metrics();
    return reply.type(container.metrics.registry.contentType).send(body);
  });
}

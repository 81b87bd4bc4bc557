/** Liveness, readiness and Prometheus metrics: outside /v1, no API key. */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';
import { serializeAsBefore } from '../schemas/document-only.js';
import { Health, MetricsText, Readiness } from '../schemas/ops.js';

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
  /** Per upstream model: `reachable` or `unreachable since <time> (<code>)`. Informs only: never makes the replica not ready. */
  upstreams: Record<string, string>;
  /** Per deployment of the models that list several: `ready`, `cooling down until <time>` or `unreachable since <time> (<code>)`. Informs only. */
  deployments: Record<string, string>;
  /** Per in-process runtime a model's files are pulled for but which is not installed: what is missing and its command. Informs only. */
  runtimes: Record<string, string>;
  /** What features report beside their checks (the request log's gap). Informs only. */
  notes: Record<string, string>;
}

export interface OpsRouteDeps {
  readiness(): Promise<Readiness>;
  metrics: Metrics;
}

export function registerOpsRoutes(app: FastifyInstance, { readiness: readinessOf, metrics }: OpsRouteDeps): void {
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } }, ...serializeAsBefore }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true, response: { 200: Readiness, 503: Readiness } }, ...serializeAsBefore }, async (request, reply) => {
    const readiness = await readinessOf();
    if (!readiness.ready) request.log.warn({ readiness }, 'not ready');
    const body: Record<string, unknown> = { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks };
    if (Object.keys(readiness.upstreams).length > 0) body.upstreams = readiness.upstreams;
    if (Object.keys(readiness.deployments).length > 0) body.deployments = readiness.deployments;
    if (Object.keys(readiness.runtimes).length > 0) body.runtimes = readiness.runtimes;
    if (Object.keys(readiness.notes).length > 0) body.notes = readiness.notes;
    return reply.code(readiness.ready ? 200 : 503).send(body);
  });

  app.get('/metrics', { schema: { hide: true, response: { 200: MetricsText } }, ...serializeAsBefore }, async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
}

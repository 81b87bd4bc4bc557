/**
 * One server span per HTTP request when tracing is on: continued from an incoming W3C
 * `traceparent`, named by method and route template, with the status, the model and the
 * project id. Never a key, a header value or a body. The span is made the active context
 * for the hooks and the handler (set again before the handler, because body parsing runs
 * in the socket's async context), so the spans below it (credit check, inference, upstream
 * call, blobs) are its children.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { tracer } from '../../observability/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    traceContext: Context | null;
  }
}

function spanOf(request: FastifyRequest): Span | undefined {
  return request.traceContext ? trace.getSpan(request.traceContext) : undefined;
}

function modelOf(body: unknown): string | null {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return null;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' && model.length <= 200 ? model : null;
}

function finish(request: FastifyRequest, status: number | null): void {
  const span = spanOf(request);
  if (!span) return;
  request.traceContext = null;
  const route = request.routeOptions.url ?? 'unmatched';
  span.updateName(`${request.method} ${route}`);
  span.setAttribute('http.route', route);
  const model = modelOf(request.body);
  if (model) span.setAttribute('sluice.model', model);
  const projectId = request.caller?.principal.projectId;
  if (projectId) span.setAttribute('sluice.project_id', projectId);
  if (status === null) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'client aborted' });
  } else {
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

export function registerTracing(app: FastifyInstance): void {
  app.decorateRequest('traceContext', null);

  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer().startSpan(
      request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'sluice.request_id': request.id } },
      parent,
    );
    request.traceContext = trace.setSpan(parent, span);
    context.with(request.traceContext, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.traceContext) context.with(request.traceContext, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, null);
    done();
  });
}

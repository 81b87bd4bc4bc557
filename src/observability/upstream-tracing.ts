/**
 * Client spans for outgoing HTTP made with undici (the OpenAI-compatible upstream client's
 * Pool), through undici's diagnostics channels rather than edits to the client: at
 * `undici:request:create` (run synchronously in the caller's async context) a child span of
 * the active span is started and its W3C `traceparent` added to the request's headers; the
 * response's status ends it. Requests made outside any span (health checks, test clients)
 * are left alone.
 */
import diagnostics from 'node:diagnostics_channel';
import { context, propagation, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { failSpan, tracer } from './tracing.js';

interface UndiciRequest {
  origin?: string | URL;
  method?: string;
  path?: string;
  addHeader(name: string, value: string): unknown;
}

const spans = new WeakMap<object, Span>();

function onCreate(message: unknown): void {
  const { request } = message as { request: UndiciRequest };
  const active = context.active();
  if (!trace.getSpan(active)) return;
  const origin = request.origin ? new URL(String(request.origin)) : null;
  const path = (request.path ?? '/').split('?')[0]!;
  const span = tracer().startSpan(
    `${request.method ?? 'GET'} ${path}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': request.method ?? 'GET',
        'server.address': origin?.hostname ?? '',
        'server.port': origin ? Number(origin.port || (origin.protocol === 'https:' ? 443 : 80)) : 0,
        'url.path': path,
      },
    },
    active,
  );
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(active, span), carrier);
  for (const [name, value] of Object.entries(carrier)) request.addHeader(name, value);
  spans.set(request, span);
}

function onHeaders(message: unknown): void {
  const { request, response } = message as { request: object; response: { statusCode: number } };
  const span = spans.get(request);
  if (!span) return;
  span.setAttribute('http.response.status_code', response.statusCode);
  if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
}

function onTrailers(message: unknown): void {
  const { request } = message as { request: object };
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  span.end();
}

function onError(message: unknown): void {
  const { request, error } = message as { request: object; error: unknown };
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  failSpan(span, error);
  span.end();
}

const CHANNELS: [string, (message: unknown) => void][] = [
  ['undici:request:create', onCreate],
  ['undici:request:headers', onHeaders],
  ['undici:request:trailers', onTrailers],
  ['undici:request:error', onError],
];

/** Subscribes; returns the unsubscribe. */
export function traceUndiciRequests(): () => void {
  for (const [name, listener] of CHANNELS) diagnostics.subscribe(name, listener);
  return () => {
    for (const [name, listener] of CHANNELS) diagnostics.unsubscribe(name, listener);
  };
}

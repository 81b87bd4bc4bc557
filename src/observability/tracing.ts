/**
 * OpenTelemetry tracing, off unless the standard OTEL_* variables ask for it (see
 * src/config/tracing-config.ts). When on, a NodeTracerProvider is registered globally with
 * the AsyncLocalStorage context manager and the W3C trace-context propagator, spans are
 * batched to an OTLP/HTTP collector (protobuf, the specification's default, or JSON, as
 * OTEL_EXPORTER_OTLP_PROTOCOL asks), and outgoing undici requests made while a span is
 * active get a client span and a `traceparent` header (upstream-tracing.ts). When off,
 * nothing is registered and every span below is the API's no-op. The SDK and its exporter
 * live in ./tracing-sdk.ts, loaded only when tracing is on.
 */
import { trace, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';

export const TRACER_NAME = 'sluice';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

export interface Tracing {
  /** Flushes pending spans and unregisters the globals. */
  shutdown(): Promise<void>;
}

/** Runs `work` in a child span of the active one; errors mark the span and are rethrown. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
  if (err instanceof Error) span.recordException({ name: err.name, message: err.name });
}

/**
 * OpenTelemetry tracing, off unless the standard OTEL_* variables ask for it (see
 * src/config/tracing-config.ts). When on, a NodeTracerProvider is registered globally with
 * the AsyncLocalStorage context manager and the W3C trace-context propagator, spans are
 * batched to an OTLP/HTTP collector (protobuf, the specification's default, or JSON, as
 * OTEL_EXPORTER_OTLP_PROTOCOL asks), and outgoing undici requests made while a span is
 * active get a client span and a `traceparent` header (upstream-tracing.ts). When off,
 * nothing is registered and every span below is the API's no-op.
 */
import { context, propagation, trace, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/schema.js';
import { traceUndiciRequests } from './upstream-tracing.js';

export const TRACER_NAME = 'sluice';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

export interface Tracing {
  /** Flushes pending spans and unregisters the globals. */
  shutdown(): Promise<void>;
}

/** `processors` replaces the OTLP exporter (tests pass an in-memory one). */
export function startTracing(config: TracingConfig, processors?: SpanProcessor[]): Tracing {
  const spanProcessors = processors ?? [new BatchSpanProcessor(otlpExporter(config))];
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors,
  });
  provider.register();
  const stopUndici = traceUndiciRequests();
  return {
    async shutdown() {
      stopUndici();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The OTLP/HTTP exporter in the configured encoding; the endpoint, when not given, is the exporter's (OTEL_EXPORTER_OTLP_* or localhost:4318). */
function otlpExporter(config: TracingConfig): SpanExporter {
  const options = { url: config.endpoint ?? undefined };
  return config.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
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

/**
 * The OpenTelemetry SDK side of tracing (./tracing.ts): the global NodeTracerProvider, the
 * OTLP/HTTP exporter (protobuf by default, JSON with `http/json`) and the undici client spans. Loaded only when tracing is configured,
 * so a start without it does not load the SDK's few hundred modules.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/schema.js';
import type { Tracing } from './tracing.js';
import { traceUndiciRequests } from './upstream-tracing.js';

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

/**
 * The OpenTelemetry SDK side of tracing (./tracing.ts): the global NodeTracerProvider, the
 * OTLP/HTTP exporter and the undici client spans. Loaded only when tracing is configured,
 * so a start without it does not load the SDK's few hundred modules.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/schema.js';
import type { Tracing } from './tracing.js';
import { traceUndiciRequests } from './upstream-tracing.js';

/** `processors` replaces the OTLP exporter (tests pass an in-memory one). */
export function startTracing(config: TracingConfig, processors?: SpanProcessor[]): Tracing {
  const spanProcessors = processors ?? [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint ?? undefined }))];
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

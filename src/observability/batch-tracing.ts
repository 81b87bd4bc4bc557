/**
 * Spans for batch lines. A batch runs for hours across many workers, so it has no span of
 * its own that stays open; instead every line's span is the root of its own trace and
 * links to the span of the request that created the batch (POST /v1/batches), whose W3C
 * traceparent is stored with the batch. Tracing backends show each line as "linked to"
 * that request. The line's credit check, inference, upstream call and usage transaction
 * are its children.
 */
import { createHash } from 'node:crypto';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { failSpan, tracer } from './tracing.js';

/** The W3C traceparent of the active span, or null outside any (valid) span. */
export function activeTraceParent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * The span context a batch's lines link to: its creating request's, from the stored
 * traceparent. A batch created while tracing was off (or before the traceparent was
 * stored) has none; its lines link to one context derived from the batch id instead, the
 * same on every worker, so they still group under one link.
 */
export function batchSpanContext(batch: { id: string; traceParent: string | null }): SpanContext {
  if (batch.traceParent) {
    const stored = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent: batch.traceParent }));
    if (stored && trace.isSpanContextValid(stored)) return stored;
  }
  const hash = createHash('sha256').update(`sluice-batch:${batch.id}`).digest('hex');
  return { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

/** Runs one attempt of one batch line in a root span linked to its batch's creating request. */
export function inBatchLineSpan<T>(
  batch: { id: string; traceParent: string | null },
  lineNo: number,
  attempt: number,
  work: () => Promise<T>,
): Promise<T> {
  const options = {
    root: true,
    links: [{ context: batchSpanContext(batch) }],
    attributes: { 'sluice.batch_id': batch.id, 'sluice.batch_line': lineNo, 'sluice.attempt': attempt },
  };
  return tracer().startActiveSpan('batch.line', options, async (span) => {
    try {
      return await work();
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

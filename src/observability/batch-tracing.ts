/**
 * Spans for batch lines. A batch runs for hours across many workers, so it has no span of
 * its own that stays open; instead every line's span is the root of its own trace and
 * links to one span context derived from the batch id (the same on every worker), which
 * tracing backends show as "linked to" the batch. The line's credit check, inference,
 * upstream call and usage transaction are its children.
 */
import { createHash } from 'node:crypto';
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import { failSpan, tracer } from './tracing.js';

/** The span context every line of `batchId` links to. */
export function batchSpanContext(batchId: string): SpanContext {
  const hash = createHash('sha256').update(`sluice-batch:${batchId}`).digest('hex');
  return { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

/** Runs one attempt of one batch line in a root span linked to its batch. */
export function inBatchLineSpan<T>(batchId: string, lineNo: number, attempt: number, work: () => Promise<T>): Promise<T> {
  const options = {
    root: true,
    links: [{ context: batchSpanContext(batchId) }],
    attributes: { 'sluice.batch_id': batchId, 'sluice.batch_line': lineNo, 'sluice.attempt': attempt },
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

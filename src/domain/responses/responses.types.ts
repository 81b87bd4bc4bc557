/**
 * The Responses service's contract with its callers (the route, stored responses,
 * background runs): the context a run takes and the events it produces.
 */
import type { CallContext } from '../models/inference-backend.port.js';
import type { ResponseInputItemIn } from '../../wire/responses/body.js';

/** An input item as a validated body holds it: message, function_call, function_call_output or reasoning. */
export type ResponseInputItem = ResponseInputItemIn;

/** One server-sent event of a streamed response (`type`, `sequence_number`, and the event's own fields). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

export interface ResponsesContext extends CallContext {
  /** Where the call came from, for usage records ("/v1/responses", "batch"). */
  route?: string;
  /** The response's id; generated once at the start when absent (the streamed and the stored id agree). */
  responseId?: string;
  /** Earlier conversation items, prepended before this request's input (after `instructions`). */
  priorItems?: ResponseInputItem[];
  /** Called once with the final resource, whatever the outcome (completed, incomplete, failed or cancelled). */
  onSettled?: (resource: Record<string, unknown>) => Promise<void>;
}

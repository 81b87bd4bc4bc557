/**
 * One response from start to end: its head (what the request set), its output as it
 * grows, and its status. Each step returns the stream events it produced, numbered in
 * order; the resource it stands at is read at any time (for `onSettled`).
 */
import type { TokenUsage } from '../models/inference-backend.port.js';
import { isAppError, type ErrorKind } from '../shared/errors.js';
import { ResponseOutput } from './output-items.js';
import { responseResource, type ResponseHead, type ResponseState } from './resource.js';
import type { ResponseStreamEvent } from './responses.types.js';

/** The error `type` a failed response reports, by kind (a Map: the kind is never a client's string, but stays a lookup). */
const ERROR_TYPES: ReadonlyMap<ErrorKind, string> = new Map([
  ['invalid_request', 'invalid_request_error'],
  ['context_length', 'invalid_request_error'],
  ['not_found', 'invalid_request_error'],
  ['insufficient_quota', 'insufficient_quota'],
  ['payment_required', 'insufficient_quota'],
  ['rate_limit', 'rate_limit_exceeded'],
]);

/** An error as a response's `error`: its message only when it may reach the client. */
function errorOf(err: unknown): NonNullable<ResponseState['error']> {
  if (!isAppError(err)) return { message: 'The response failed on the server', type: 'server_error', param: null, code: 'server_error' };
  return {
    message: err.expose ? err.message : 'The response failed on the server',
    type: ERROR_TYPES.get(err.kind) ?? 'server_error',
    param: err.param,
    code: err.code ?? (err.kind === 'upstream' ? 'upstream_error' : 'server_error'),
  };
}

/** A finish reason that ended the answer short: the reason `incomplete_details` gives. */
const INCOMPLETE: ReadonlyMap<string, string> = new Map([
  ['length', 'max_output_tokens'],
  ['content_filter', 'content_filter'],
]);

export class ResponseRun {
  readonly output: ResponseOutput;
  readonly state: ResponseState = { status: 'in_progress', output: [] };
  started = false;

  constructor(readonly head: ResponseHead) {
    this.output = new ResponseOutput(head.maxToolCalls);
  }

  resource(): Record<string, unknown> {
    return responseResource(this.head, this.state);
  }

  /** `response.created` and `response.in_progress`. */
  start(served: { model: string; outputCap?: number }): ResponseStreamEvent[] {
    this.started = true;
    this.state.model = served.model;
    if (served.outputCap !== undefined) this.state.outputCap = served.outputCap;
    this.output.event('response.created', { response: this.resource() });
    this.output.event('response.in_progress', { response: this.resource() });
    return this.output.drain();
  }

  /** The answer ended: its items closed, then `response.completed` (or `response.incomplete`). */
  finish(finishReason: string, usage: TokenUsage, completedAt: number): ResponseStreamEvent[] {
    const incomplete = INCOMPLETE.get(finishReason) ?? null;
    this.output.close(incomplete ? 'incomplete' : 'completed');
    Object.assign(this.state, {
      status: incomplete ? 'incomplete' : 'completed',
      output: this.output.items(incomplete ? 'incomplete' : 'completed'),
      completedAt: incomplete ? null : completedAt,
      incompleteReason: incomplete,
      usage,
    });
    this.output.event(incomplete ? 'response.incomplete' : 'response.completed', { response: this.resource() });
    return this.output.drain();
  }

  /**
   * The run failed after it started: an `error` event (OpenAI's flat fields, and Open
   * Responses' `error` object), then `response.failed` with what was produced.
   */
  fail(err: unknown, usage: TokenUsage | null): ResponseStreamEvent[] {
    const error = errorOf(err);
    Object.assign(this.state, { status: 'failed', output: this.output.items('incomplete'), error, usage });
    this.output.event('error', { code: error.code, message: error.message, param: error.param, error });
    this.output.event('response.failed', { response: this.resource() });
    return this.output.drain();
  }

  /** The run failed before it started (nothing was produced): the resource `onSettled` receives. */
  refused(err: unknown): void {
    Object.assign(this.state, { status: 'failed', error: errorOf(err) });
  }

  /** The client left (or the caller stopped reading) before the end. */
  cancelled(): void {
    if (this.state.status === 'in_progress') Object.assign(this.state, { status: 'cancelled', output: this.output.items('incomplete') });
  }
}

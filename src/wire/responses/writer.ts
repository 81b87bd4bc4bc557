/**
 * The Responses wire's writer (the domain's ResponseWriter port): one response from start
 * to end, its head (what the request set), its output as it grows (output-items.ts) and
 * its status. Each step returns the stream events it produced, numbered in order; the
 * resource it stands at is read at any time (for `onSettled`).
 */
import type { AnswerEvent } from '../../domain/completions/answer-reader.js';
import type { TokenUsage } from '../../domain/models/inference-backend.port.js';
import type { ResponseRunWriter, ResponseWriter } from '../../domain/responses/response-writer.port.js';
import type { ResponsesRequest, ResponseStreamEvent } from '../../domain/responses/responses.types.js';
import { isAppError, type ErrorKind } from '../../domain/shared/errors.js';
import { openAIErrorType } from '../openai-errors.js';
import { queuedResource } from './background-resource.js';
import { ResponseOutput } from './output-items.js';
import { headOf, responseResource, type ResponseHead, type ResponseState } from './resource.js';

/**
 * The kinds a failed response reports under their own `type` (OpenAI's name for each, the
 * envelope's); every other failure is a `server_error` (a Set: the kind is never a client's string).
 */
const REPORTED_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'invalid_request',
  'context_length',
  'not_found',
  'insufficient_quota',
  'payment_required',
  'rate_limit',
]);

/** An error as a response's `error`: its message only when it may reach the client. */
function errorOf(err: unknown): NonNullable<ResponseState['error']> {
  if (!isAppError(err)) return { message: 'The response failed on the server', type: 'server_error', param: null, code: 'server_error' };
  return {
    message: err.expose ? err.message : 'The response failed on the server',
    type: REPORTED_KINDS.has(err.kind) ? openAIErrorType(err.kind) : 'server_error',
    param: err.param,
    code: err.code ?? (err.kind === 'upstream' ? 'upstream_error' : 'server_error'),
  };
}

/** A finish reason that ended the answer short: the reason `incomplete_details` gives. */
const INCOMPLETE: ReadonlyMap<string, string> = new Map([
  ['length', 'max_output_tokens'],
  ['content_filter', 'content_filter'],
]);

export class ResponseRun implements ResponseRunWriter {
  readonly output: ResponseOutput;
  readonly state: ResponseState = { status: 'in_progress', output: [] };

  /** `seal`: seals reasoning into `encrypted_content` (the request asked for it), or null. */
  constructor(readonly head: ResponseHead, seal: ((text: string) => string) | null = null) {
    this.output = new ResponseOutput({ maxToolCalls: head.maxToolCalls, namespaced: head.namespaced, seal });
  }

  resource(): Record<string, unknown> {
    return responseResource(this.head, this.state);
  }

  /** `response.created` and `response.in_progress`. */
  start(served: { model: string; outputCap?: number }): ResponseStreamEvent[] {
    this.state.model = served.model;
    if (served.outputCap !== undefined) this.state.outputCap = served.outputCap;
    this.output.event('response.created', { response: this.resource() });
    this.output.event('response.in_progress', { response: this.resource() });
    return this.output.drain();
  }

  read(event: AnswerEvent): void {
    this.output.read(event);
  }

  drain(): ResponseStreamEvent[] {
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

  /** A warm-up ended: completed with no output item (not even an empty message) and no tokens. */
  warmedUp(completedAt: number): ResponseStreamEvent[] {
    Object.assign(this.state, { status: 'completed', output: [], completedAt, usage: { inputTokens: 0, outputTokens: 0 } });
    this.output.event('response.completed', { response: this.resource() });
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

/** The Responses writer the composition gives the responses and stored-responses services. */
export const responsesWriter: ResponseWriter = {
  run: (request: ResponsesRequest, id: string, createdAt: number, seal) => new ResponseRun(headOf(request, id, createdAt), seal),
  queued: queuedResource,
};

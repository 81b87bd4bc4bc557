/**
 * How an inbound wire writes its errors. Each wire format names its own (its folder under
 * src/wire), and a route takes the one of the wire it serves (route config `wireErrors`,
 * src/http/route-errors.ts); a route that names none answers in OpenAI's envelope. The
 * scope's `errorBody` (scope-policy.ts) stays only for the scope's own refusals.
 */
import type { AppError } from '../domain/shared/errors.js';

/** What the HTTP layer knows of an error when it is answered. */
export interface ErrorAnswer {
  /** The HTTP status it is answered with (after the scope's and route's overrides). */
  status: number;
  requestId: string;
  /** The request's parsed body, when it was read: a format may echo its fields (a failed Responses object does). */
  requestBody?: unknown;
}

export interface WireErrorFormat {
  /** The JSON body of an error answer. */
  envelope(error: AppError, answer: ErrorAnswer): unknown;
  /**
   * The server-sent-events text that ends a stream cut by `error` after it started, e.g.
   * `event: error\ndata: {…}\n\n`. Never followed by the stream's normal end.
   */
  streamFrame(error: AppError, answer: ErrorAnswer): string;
  /**
   * The status this wire answers `error` with, given the one the house's table and the
   * scope's overrides give (`status`); absent, that one. A wire whose clients read statuses
   * of their own (Anthropic's 529 for an overloaded engine) says so here.
   */
  status?(error: AppError, status: number): number;
  /** The envelope's schema, for the OpenAPI document; absent, OpenAI's. */
  schema?: unknown;
}

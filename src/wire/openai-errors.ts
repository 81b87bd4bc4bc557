/**
 * OpenAI's error envelope, `{error: {message, type, code, param[, line]}}`, and its stream
 * error frame, `event: error` + `data: {"error": …}`: the one place either is written. It is
 * the format of every route that names no other (route config `wireErrors`), and the
 * shape the MCP tools, the transport errors and the scopes' own bodies take their fields
 * from. The HTTP status of a kind is not the wire's: it stays in src/http/errors.ts.
 */
import { AppError, type ErrorKind } from '../domain/shared/errors.js';
import type { WireErrorFormat } from './error-format.js';

/** OpenAI's `type` of each error kind: a closed set of names its clients read. */
const TYPE_OF_KIND: Readonly<Record<ErrorKind, string>> = {
  invalid_request: 'invalid_request_error',
  context_length: 'invalid_request_error',
  authentication: 'authentication_error',
  payment_required: 'insufficient_quota',
  permission: 'authentication_error',
  not_found: 'invalid_request_error',
  conflict: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
  unprocessable: 'invalid_request_error',
  insufficient_quota: 'insufficient_quota',
  rate_limit: 'rate_limit_exceeded',
  internal: 'internal_error',
  upstream: 'internal_error',
  // A model not installed or not configured: the server is fine, so not internal_error; the
  // envelope's types are a closed set, and of them this is a request the server cannot serve as asked.
  unavailable: 'invalid_request_error',
};

/** OpenAI's `type` of an error kind (what the envelope and a failed Responses object report). */
export const openAIErrorType = (kind: ErrorKind): string => TYPE_OF_KIND[kind];

export interface OpenAIErrorEnvelope {
  error: { message: string; type: string; code: string | null; param: string | null; line?: number };
}

/** The message a client may read: an unexposed error's (an internal fault's detail) is replaced. */
export const exposedMessage = (error: AppError): string => (error.expose ? error.message : 'Internal server error');

export function openAIErrorEnvelope(error: AppError): OpenAIErrorEnvelope {
  const body: OpenAIErrorEnvelope = { error: { message: exposedMessage(error), type: TYPE_OF_KIND[error.kind], code: error.code, param: error.param } };
  if (error.line !== undefined) body.error.line = error.line;
  return body;
}

/** An `invalid_request_error` envelope for a fault found before any request exists (a malformed HTTP request). */
export const openAIRequestFault = (message: string, code: string): OpenAIErrorEnvelope => openAIErrorEnvelope(new AppError('invalid_request', message, { code }));

export const OPENAI_ERRORS: WireErrorFormat = {
  envelope: (error) => openAIErrorEnvelope(error),
  streamFrame: (error) => `event: error\ndata: ${JSON.stringify(openAIErrorEnvelope(error))}\n\n`,
};

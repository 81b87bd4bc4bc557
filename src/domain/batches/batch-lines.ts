/**
 * What the output and error files contain: line ids, per-line request ids, and the
 * translation of a failure into the spec's "Error codes in the error file" with its
 * `[legacy:<old_code>] ` prefix.
 */
import { createHash } from 'node:crypto';
import { isAppError, type ErrorKind } from '../shared/errors.js';

export interface LineFailure {
  code: string;
  message: string;
  param: string | null;
}

/**
 * The line's `batch_req_` id and the request id its call carries. Both derive from the
 * batch id and line number, so they are the same on every attempt, worker and restart.
 */
export function lineIdentity(batchId: string, lineNo: number): { id: string; requestId: string } {
  const hash = createHash('sha256').update(`${batchId}:${lineNo}`).digest('hex');
  return { id: `batch_req_${hash.slice(0, 32)}`, requestId: `req_${hash.slice(32, 56)}` };
}

/** An output-file line; `bodyJson`, when given, is the body's JSON text as its route writes it. */
export function outputLine(id: string, customId: string, requestId: string, body: unknown, bodyJson?: string): string {
  if (bodyJson === undefined) {
    return JSON.stringify({ id, custom_id: customId, response: { status_code: 200, request_id: requestId, body }, error: null });
  }
  const [i, c, r] = [id, customId, requestId].map((s) => JSON.stringify(s));
  return `{"id":${i},"custom_id":${c},"response":{"status_code":200,"request_id":${r},"body":${bodyJson}},"error":null}`;
}

export function errorLine(id: string, customId: string, failure: LineFailure): string {
  return JSON.stringify({ id, custom_id: customId, response: null, error: failure });
}

const BY_KIND: Record<ErrorKind, { code: string; legacy: string | null }> = {
  invalid_request: { code: 'invalid_request_error', legacy: 'http_400' },
  context_length: { code: 'request_too_large', legacy: 'http_413' },
  unprocessable: { code: 'invalid_request_error', legacy: 'http_422' },
  conflict: { code: 'invalid_request_error', legacy: 'http_409' },
  authentication: { code: 'authentication_error', legacy: 'http_401' },
  permission: { code: 'authentication_error', legacy: 'http_403' },
  not_found: { code: 'not_found_error', legacy: 'http_404' },
  payload_too_large: { code: 'request_too_large', legacy: 'http_413' },
  insufficient_quota: { code: 'insufficient_quota', legacy: 'http_429' },
  payment_required: { code: 'insufficient_quota', legacy: 'http_429' },
  rate_limit: { code: 'rate_limit_exceeded', legacy: null },
  internal: { code: 'internal_error', legacy: 'http_500' },
  upstream: { code: 'internal_error', legacy: 'http_502' },
  unavailable: { code: 'internal_error', legacy: 'http_503' },
};

const withPrefix = (legacy: string | null, message: string) => (legacy ? `[legacy:${legacy}] ${message}` : message);

/** A failure that will not be retried, as an error-file entry. */
export function failureOf(error: unknown): LineFailure {
  if (!isAppError(error)) return { code: 'internal_error', message: withPrefix('http_500', 'Internal error'), param: null };
  if (error.code === 'context_length_exceeded') {
    return { code: 'request_too_large', message: withPrefix('http_413', error.message), param: error.param };
  }
  // The synchronous route answers an unknown model with 400; in the error file it is a missing resource.
  if (error.code === 'model_not_found') {
    return { code: 'not_found_error', message: withPrefix('http_404', error.message), param: error.param };
  }
  // A key's spent budget keeps its own code, as on the synchronous route.
  if (error.code === 'budget_exceeded') return { code: 'budget_exceeded', message: withPrefix('http_429', error.message), param: null };
  const mapped = BY_KIND[error.kind];
  const legacy =
    mapped.code === 'internal_error' && error.upstreamStatus !== undefined && error.upstreamStatus >= 500
      ? `http_${error.upstreamStatus}`
      : mapped.legacy;
  return { code: mapped.code, message: withPrefix(legacy, error.message), param: error.param };
}

/** A retryable failure that failed on every attempt. */
export function retriesExhausted(error: unknown, attempts: number): LineFailure {
  const detail = error instanceof Error ? error.message : String(error);
  return {
    code: 'internal_error',
    message: withPrefix('retries_exhausted', `Line failed after ${attempts} attempts: ${detail}`),
    param: null,
  };
}

export const CANCELLED: LineFailure = {
  code: 'batch_cancelled',
  message: 'This request was not executed because the batch was cancelled.',
  param: null,
};

export const EXPIRED: LineFailure = {
  code: 'batch_expired',
  message: 'This request could not be executed before the completion window expired.',
  param: null,
};

export const KEY_REVOKED: LineFailure = {
  code: 'authentication_error',
  message: withPrefix('api_key_unavailable', 'The API key that created this batch has been revoked'),
  param: null,
};

export const KEY_EXPIRED: LineFailure = {
  code: 'authentication_error',
  message: withPrefix('api_key_unavailable', 'The API key that created this batch has expired'),
  param: null,
};

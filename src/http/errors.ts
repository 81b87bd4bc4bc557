/**
 * The single table from error kinds to HTTP statuses, and the one place that writes
 * the spec's error envelope `{error: {message, type, code, param[, line]}}`. A mounted
 * scope may answer some kinds with other statuses (StatusOverrides), e.g. the decision
 * route's 402 for `insufficient_quota`; an error's challenge adds headers and may
 * replace the envelope.
 */
import type { FastifyError } from 'fastify';
import { AppError, type ErrorKind } from '../domain/shared/errors.js';
import { wordValidationIssue, type ValidationIssue } from '../wire/wording.js';

const STATUS: Record<ErrorKind, { status: number; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  context_length: { status: 400, type: 'invalid_request_error' },
  authentication: { status: 401, type: 'authentication_error' },
  payment_required: { status: 402, type: 'insufficient_quota' },
  permission: { status: 403, type: 'authentication_error' },
  not_found: { status: 404, type: 'invalid_request_error' },
  conflict: { status: 409, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unprocessable: { status: 422, type: 'invalid_request_error' },
  insufficient_quota: { status: 429, type: 'insufficient_quota' },
  rate_limit: { status: 429, type: 'rate_limit_exceeded' },
  internal: { status: 500, type: 'internal_error' },
  upstream: { status: 502, type: 'internal_error' },
  // A model not installed or not configured: the server is fine, so not internal_error; the
  // envelope's types are a closed set, and of them this is a request the server cannot serve as asked.
  unavailable: { status: 503, type: 'invalid_request_error' },
};

export interface ErrorEnvelope {
  error: { message: string; type: string; code: string | null; param: string | null; line?: number };
}

export interface HttpError {
  status: number;
  /** The envelope, or a challenge's own body. */
  body: unknown;
  headers: Record<string, string>;
}

/** Statuses a scope answers differently from the default table. */
export type StatusOverrides = Partial<Readonly<Record<ErrorKind, number>>>;

export const statusOfKind = (kind: ErrorKind): number => STATUS[kind].status;

export function errorEnvelope(error: AppError): ErrorEnvelope {
  const message = error.expose ? error.message : 'Internal server error';
  const body: ErrorEnvelope = { error: { message, type: STATUS[error.kind].type, code: error.code, param: error.param } };
  if (error.line !== undefined) body.error.line = error.line;
  return body;
}

export function appErrorToHttp(error: AppError, overrides?: StatusOverrides): HttpError {
  const status = overrides?.[error.kind] ?? STATUS[error.kind].status;
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  // The OpenAI SDKs retry 409, 429 and 5xx by default; say so when a retry cannot help
  // (a model without a backend is a configuration error, not a passing fault).
  if (status === 409 || error.kind === 'insufficient_quota' || error.code === 'model_not_available') {
    headers['x-should-retry'] = 'false';
  }
  const { challenge } = error;
  if (challenge?.headers) Object.assign(headers, challenge.headers);
  const body = challenge?.body !== undefined ? challenge.body : errorEnvelope(error);
  return { status, body, headers };
}

const INTERNAL: AppError = new AppError('internal', 'Internal server error', { code: 'internal_error' });

/** Translates Fastify's own errors (parsing, limits, schema validation) into AppErrors. */
export function fastifyErrorToApp(error: FastifyError): AppError | null {
  if (error.validation && error.validation.length > 0) {
    const { message, param, code } = wordValidationIssue(error.validation[0] as ValidationIssue, error.validationContext ?? 'body');
    return new AppError('invalid_request', message, { param, code });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'Request body is too large', { code: 'request_too_large' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('invalid_request', 'Unsupported Content-Type; send application/json', {
        code: 'invalid_content_type',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'Request body is empty; send a JSON object', { code: 'invalid_json' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body', { code: 'invalid_request_error' });
  }
  // Only a body parser's fault: a SyntaxError thrown anywhere else (a stored row that no
  // longer parses, say) is the server's, and answers 500.
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_request', 'Invalid JSON body', { code: 'invalid_json' });
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('invalid_request', error.message, { code: 'invalid_request_error' });
  }
  return null;
}

/** Any thrown value → the response to send, and whether it is a server fault to log. */
export function toHttpError(error: unknown, overrides?: StatusOverrides): HttpError & { serverFault: boolean; code: string | null; error: AppError } {
  const app = (error instanceof AppError ? error : fastifyErrorToApp(error as FastifyError)) ?? INTERNAL;
  const mapped = appErrorToHttp(app, overrides);
  // 503 is a configuration state with its remedy in the message, not a fault to log with a stack.
  const serverFault = mapped.status >= 500 && app.kind !== 'unavailable';
  return { status: mapped.status, body: mapped.body, headers: mapped.headers, serverFault, code: app.code, error: app };
}

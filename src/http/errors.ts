/**
 * The single table from error kinds to HTTP statuses, and the one place that writes
 * the spec's error envelope `{error: {message, type, code, param[, line]}}`.
 */
import type { FastifyError } from 'fastify';
import { AppError, type ErrorKind } from '../domain/shared/errors.js';

const STATUS: Record<ErrorKind, { status: number; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
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
  unavailable: { status: 503, type: 'internal_error' },
};

export interface ErrorEnvelope {
  error: { message: string; type: string; code: string | null; param: string | null; line?: number };
}

export interface HttpError {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
}

export const statusOfKind = (kind: ErrorKind): number => STATUS[kind].status;

export function appErrorToHttp(error: AppError): HttpError {
  const { status, type } = STATUS[error.kind];
  const message = error.expose ? error.message : 'Internal server error';
  const body: ErrorEnvelope = { error: { message, type, code: error.code, param: error.param } };
  if (error.line !== undefined) body.error.line = error.line;
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  // The OpenAI SDKs retry 409, 429 and 5xx by default; say so when a retry cannot help
  // (a model without a backend is a configuration error, not a passing fault).
  if (status === 409 || error.kind === 'insufficient_quota' || error.code === 'model_not_available') {
    headers['x-should-retry'] = 'false';
  }
  return { status, body, headers };
}

const INTERNAL: AppError = new AppError('internal', 'Internal server error', { code: 'internal_error' });

/** Translates Fastify's own errors (parsing, limits, schema validation) into AppErrors. */
export function fastifyErrorToApp(error: FastifyError): AppError | null {
  if (error.validation && error.validation.length > 0) {
    const first = error.validation[0]!;
    const params = first.params as Record<string, unknown>;
    const missing = typeof params.missingProperty === 'string' ? params.missingProperty : null;
    const extra = typeof params.additionalProperty === 'string' ? params.additionalProperty : null;
    const pathParts = first.instancePath.split('/').filter(Boolean);
    if (missing ?? extra) pathParts.push((missing ?? extra)!);
    const param = pathParts.length > 0 ? pathParts.join('.') : null;
    const context = error.validationContext ?? 'body';
    const where = context === 'body' ? '' : `${context} `;
    let message = `${where}${param ?? `request ${context}`} ${first.message ?? 'is invalid'}`;
    if (missing) message = `${missing} is required`;
    else if (extra) message = `Unrecognized request argument supplied: ${param}`;
    return new AppError('invalid_request', message, { param, code: 'invalid_request_error' });
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
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_request', 'Invalid JSON body', { code: 'invalid_json' });
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('invalid_request', error.message, { code: 'invalid_request_error' });
  }
  return null;
}

/** Any thrown value → the response to send, and whether it is a server fault to log. */
export function toHttpError(error: unknown): HttpError & { serverFault: boolean } {
  const app = error instanceof AppError ? error : fastifyErrorToApp(error as FastifyError);
  const mapped = appErrorToHttp(app ?? INTERNAL);
  return { ...mapped, serverFault: mapped.status >= 500 };
}

/**
 * The single table from error kinds to HTTP statuses, and the translation of any thrown
 * value into the answer to send. The body is written by the wire format of the route that
 * failed (src/wire/error-format.ts; OpenAI's envelope, src/wire/openai-errors.ts, when it
 * names none). A mounted scope may answer some kinds with other statuses
 * (StatusOverrides), e.g. the decision route's 402 for `insufficient_quota`; an error's
 * challenge adds headers and may replace the envelope.
 */
import type { FastifyError } from 'fastify';
import { AppError, STATUS_OF_KIND, type ErrorKind } from '../domain/shared/errors.js';
import type { WireErrorFormat } from '../wire/error-format.js';
import { OPENAI_ERRORS } from '../wire/openai-errors.js';
import { wordValidationIssue, type ValidationIssue } from '../wire/wording.js';

const STATUS: Readonly<Record<ErrorKind, number>> = STATUS_OF_KIND;

export interface HttpError {
  status: number;
  /** The wire's envelope, or a challenge's own body. */
  body: unknown;
  headers: Record<string, string>;
}

/** Statuses a scope answers differently from the default table. */
export type StatusOverrides = Partial<Readonly<Record<ErrorKind, number>>>;

/** Where an error is answered: the statuses and the wire format of the route that failed, and its request. */
export interface ErrorContext {
  overrides?: StatusOverrides;
  /** Absent: OpenAI's envelope. */
  format?: WireErrorFormat;
  request?: { id: string; body?: unknown };
}

export const statusOfKind = (kind: ErrorKind): number => STATUS[kind];

/** The status of `error` where it is answered, after the scope's and the route's overrides. */
export const statusOf = (error: AppError, overrides?: StatusOverrides): number => overrides?.[error.kind] ?? STATUS[error.kind];

/** The status of `error` where it is answered, after the overrides and the wire's own statuses. */
export const answeredStatusOf = (error: AppError, overrides?: StatusOverrides, format?: WireErrorFormat): number => {
  const status = statusOf(error, overrides);
  return format?.status ? format.status(error, status) : status;
};

export function appErrorToHttp(error: AppError, context: ErrorContext = {}): HttpError {
  const status = answeredStatusOf(error, context.overrides, context.format);
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  // The OpenAI SDKs retry 409, 429 and 5xx by default; say so when a retry cannot help
  // (a model without a backend is a configuration error, not a passing fault).
  if (status === 409 || error.kind === 'insufficient_quota' || error.code === 'model_not_available') {
    headers['x-should-retry'] = 'false';
  }
  const { challenge } = error;
  if (challenge?.headers) Object.assign(headers, challenge.headers);
  const format = context.format ?? OPENAI_ERRORS;
  const body =
    challenge?.body !== undefined
      ? challenge.body
      : format.envelope(error, { status, requestId: context.request?.id ?? '', requestBody: context.request?.body });
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

/** Any thrown value as an AppError: a Fastify error translated, anything else an opaque 500. */
export const asAppError = (error: unknown): AppError =>
  (error instanceof AppError ? error : fastifyErrorToApp(error as FastifyError)) ?? INTERNAL;

/** Any thrown value → the response to send, and whether it is a server fault to log. */
export function toHttpError(error: unknown, context: ErrorContext = {}): HttpError & { serverFault: boolean; code: string | null; error: AppError } {
  const app = asAppError(error);
  const mapped = appErrorToHttp(app, context);
  // 503 is a configuration state with its remedy in the message, not a fault to log with a stack.
  const serverFault = mapped.status >= 500 && app.kind !== 'unavailable';
  return { status: mapped.status, body: mapped.body, headers: mapped.headers, serverFault, code: app.code, error: app };
}

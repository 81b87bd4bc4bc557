/**
 * Errors every upstream protocol raises alike: an answer Sluice cannot use, a transport
 * failure, a timeout; and the redaction of a provider key an engine echoes back in an
 * error body, so that no key reaches an answer, an error, a log line or a trace.
 */
import { AppError } from '../../domain/shared/errors.js';

/** An answer Sluice cannot use: malformed JSON or SSE, a missing result, an SSE `error` event. */
export function upstreamProtocolError(modelId: string, message: string): AppError {
  return new AppError('upstream', `Upstream for model ${modelId} answered unexpectedly: ${message}`, {
    code: 'upstream_error',
    retryable: true,
  });
}

export function upstreamTimeout(modelId: string, upstreamStatus?: number): AppError {
  return new AppError('upstream', `Upstream for model ${modelId} did not answer in time`, {
    code: 'upstream_timeout',
    retryable: true,
    upstreamStatus,
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Errors thrown while connecting, sending or reading (no HTTP status). */
export function upstreamTransportError(modelId: string, err: unknown, signal: AbortSignal): AppError {
  if (err instanceof AppError) return err;
  if (signal.aborted) {
    return new AppError('unavailable', 'The request was aborted before the upstream answered', {
      code: 'request_aborted',
      retryable: true,
      cause: err,
    });
  }
  const code = (err as { code?: string }).code ?? 'unknown';
  if (TIMEOUT_CODES.has(code)) return upstreamTimeout(modelId);
  return new AppError('upstream', `Upstream for model ${modelId} is unreachable or closed the connection (${code})`, {
    code: 'upstream_error',
    retryable: true,
    cause: err,
  });
}

/** A success status whose body is not JSON (an HTML page, a proxy's text). */
export function upstreamNotJson(modelId: string, status: number, contentType: string | undefined): AppError {
  return upstreamProtocolError(modelId, `it answered status ${status} with a body that is not JSON (content-type ${contentType ?? 'none'})`);
}

export const REDACTED = '[redacted]';

/**
 * `text` with the deployment's key in it replaced, whole or as a hint: an engine that
 * echoes the key back in an error body ("Incorrect API key provided: sk-ab****wxyz") must
 * not put it in the message the client, the logs and the traces see.
 */
export function redactSecret(text: string, secret: string | null): string {
  if (!secret || secret.length < 8 || text === '') return text;
  const tail = secret.slice(-4);
  const head = secret.slice(0, 12);
  return text
    .split(secret)
    .join(REDACTED)
    .replace(/[^\s"',;:]+/g, (token) => {
      // A sentence's full stop is not part of the hint.
      const core = token.replace(/[.!?)]+$/, '');
      const masked = /[*\u2026]|\.\.\./.test(core) && core.endsWith(tail);
      return masked || core.includes(head) ? REDACTED + token.slice(core.length) : token;
    });
}

/** What one protocol's error mapping makes of a status and body that are not 2xx. */
export type HttpErrorMapper = (modelId: string, status: number, text: string, headers: Record<string, string | string[] | undefined>) => AppError;

/** The first value of a response header. */
export const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** `Retry-After` in whole seconds (delta-seconds form), when it is one. */
export function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  const raw = headerValue(header);
  const seconds = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}

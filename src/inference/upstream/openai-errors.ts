/**
 * Upstream failures → AppError, the only place that knows how servers of the OpenAI format
 * fail (the openai protocol's engines and presets, Azure OpenAI). 5xx and connection failures are 502 `upstream_error` (retryable); 429 stays a
 * retryable 429; the client's own 4xx mistakes keep their status, message, param and
 * code; an upstream refusing Sluice itself (401/403, odd statuses) is Sluice's fault: 502.
 */
import { AppError, type ErrorKind } from '../../domain/shared/errors.js';
import { retryAfterSeconds, upstreamProtocolError, upstreamTimeout } from './errors.js';

export { upstreamProtocolError };

const PASSTHROUGH: Record<number, ErrorKind> = {
  400: 'invalid_request',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'unprocessable',
};

interface UpstreamErrorBody {
  message: string | null;
  code: string | null;
  param: string | null;
}

const MAX_MESSAGE_CHARS = 500;

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Reads `{error: {message, code, param}}`, `{error: "…"}`, `{message}`, `{detail}` or plain text. */
export function parseUpstreamError(text: string): UpstreamErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: str(text.trim().slice(0, MAX_MESSAGE_CHARS)), code: null, param: null };
  }
  const root = (parsed ?? {}) as Record<string, unknown>;
  const inner = (typeof root.error === 'object' && root.error !== null ? root.error : root) as Record<string, unknown>;
  const code = typeof inner.code === 'number' ? null : str(inner.code);
  const message = str(inner.message) ?? str(root.error) ?? str(root.detail) ?? str(root.message);
  return { message: message?.slice(0, MAX_MESSAGE_CHARS) ?? null, code, param: str(inner.param) };
}

/**
 * A 404 from the web server rather than from the API: no JSON, HTML, or the frameworks'
 * bare "Not Found". An API's own 404 (an unknown model) says more and is passed through.
 */
function isRouteMiss(text: string, body: UpstreamErrorBody): boolean {
  if (body.message === null || /^(404 )?not found\.?$/i.test(body.message)) return true;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

export function upstreamHttpError(
  modelId: string,
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
): AppError {
  const body = parseUpstreamError(text);
  const detail = body.message ?? `status ${status}`;
  if (status >= 500) {
    return new AppError('upstream', `Upstream error for model ${modelId} (status ${status}): ${detail}`, {
      code: 'upstream_error',
      retryable: true,
      upstreamStatus: status,
    });
  }
  if (status === 429) {
    return new AppError('rate_limit', `Upstream for model ${modelId} is rate limited: ${detail}`, {
      code: body.code ?? 'rate_limit_exceeded',
      retryable: true,
      upstreamStatus: status,
      retryAfterSeconds: retryAfterSeconds(headers['retry-after']),
    });
  }
  if (status === 408) {
    return upstreamTimeout(modelId, status);
  }
  if (status === 404 && isRouteMiss(text, body)) {
    return new AppError(
      'upstream',
      `Upstream for model ${modelId} has no such path (status 404 ${body.message ?? 'Not Found'}); ` +
        `check that models.${modelId}.base_url ends in /v1`,
      { code: 'upstream_error', upstreamStatus: status },
    );
  }
  // An input over the model's limit is its own kind, whatever status the upstream gave it (a scope may answer it differently).
  const kind = body.code === 'context_length_exceeded' && status === 400 ? 'context_length' : PASSTHROUGH[status];
  if (kind) {
    return new AppError(kind, body.message ?? `Upstream rejected the request (status ${status})`, {
      code: body.code ?? 'invalid_request_error',
      param: body.param,
      upstreamStatus: status,
    });
  }
  const why = status === 401 || status === 403 ? ' (check models.<id>.api_key_env)' : '';
  return new AppError('upstream', `Upstream for model ${modelId} refused the request (status ${status})${why}: ${detail}`, {
    code: 'upstream_error',
    upstreamStatus: status,
  });
}

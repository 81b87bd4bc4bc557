/**
 * How the Messages API fails (https://docs.anthropic.com/en/api/errors), in Sluice's
 * meaning: `{type: "error", error: {type, message}}` with 400 invalid_request_error (a
 * prompt over the context window is `context_length`, which feeds the model's
 * `context_window_fallbacks`), 401 authentication_error and 403 permission_error
 * (Sluice's own configuration: 502), 404 not_found_error, 413 request_too_large, 429
 * rate_limit_error (with `retry-after`), 500 api_error and 529 overloaded_error
 * (retryable: another deployment, else a fallback). The key is redacted from the body
 * before it gets here (../../http-client.ts).
 */
import { AppError } from '../../../../domain/shared/errors.js';
import { retryAfterSeconds, upstreamTimeout } from '../../errors.js';

const MAX_MESSAGE_CHARS = 500;

/** Anthropic words it "prompt is too long: 201234 tokens > 200000 maximum" (and engines serving Messages their own way). */
const CONTEXT_LENGTH = /prompt is too long|context window|context length|maximum context|too many (input )?tokens/i;

export function readAnthropicError(text: string): { type: string | null; message: string | null } {
  try {
    const root = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } | string; message?: unknown };
    const inner = typeof root.error === 'object' && root.error !== null ? root.error : null;
    const message = typeof inner?.message === 'string' ? inner.message : typeof root.error === 'string' ? root.error : typeof root.message === 'string' ? root.message : null;
    return { type: typeof inner?.type === 'string' ? inner.type : null, message: message?.slice(0, MAX_MESSAGE_CHARS) ?? null };
  } catch {
    return { type: null, message: text.trim().slice(0, MAX_MESSAGE_CHARS) || null };
  }
}

export function anthropicHttpError(modelId: string, status: number, text: string, headers: Record<string, string | string[] | undefined>): AppError {
  const { type, message } = readAnthropicError(text);
  const detail = `${type ?? `status ${status}`}${message ? `: ${message}` : ''}`;
  if (status === 529 || type === 'overloaded_error') {
    return new AppError('upstream', `Upstream for model ${modelId} is overloaded (${detail})`, { code: 'upstream_error', retryable: true, upstreamStatus: status });
  }
  if (status >= 500) {
    return new AppError('upstream', `Upstream error for model ${modelId} (status ${status}): ${detail}`, { code: 'upstream_error', retryable: true, upstreamStatus: status });
  }
  if (status === 429) {
    return new AppError('rate_limit', `Upstream for model ${modelId} is rate limited: ${detail}`, {
      code: 'rate_limit_exceeded',
      retryable: true,
      upstreamStatus: status,
      retryAfterSeconds: retryAfterSeconds(headers['retry-after']),
    });
  }
  if (status === 408) return upstreamTimeout(modelId, status);
  if (status === 400 && message && CONTEXT_LENGTH.test(message)) {
    return new AppError('context_length', message, { code: 'context_length_exceeded', param: 'messages', upstreamStatus: status });
  }
  if (status === 400 || status === 404 || status === 413) {
    const kind = status === 400 ? 'invalid_request' : status === 404 ? 'not_found' : 'payload_too_large';
    return new AppError(kind, message ?? `Upstream rejected the request (status ${status})`, { code: type ?? 'invalid_request_error', upstreamStatus: status });
  }
  const why = status === 401 || status === 403 ? ` (check the key of models.${modelId}: api_key_env or api_key_file)` : '';
  return new AppError('upstream', `Upstream for model ${modelId} refused the request (status ${status})${why}: ${detail}`, { code: 'upstream_error', upstreamStatus: status });
}

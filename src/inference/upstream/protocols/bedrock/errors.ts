/**
 * Bedrock's failures → AppError, in Sluice's meaning: throttling and quotas are a
 * retryable 429; a model not ready, an unavailable or failing service and a model's
 * timeout are retryable upstream errors (another deployment, or a fallback, may answer);
 * a ValidationException about the input's length is `context_length` (which feeds
 * `context_window_fallbacks`), any other is the caller's 400; refused credentials and an
 * unknown model are Sluice's configuration, a 502 that says so. Connection failures keep
 * their code as the cause (the router takes the engine out). Messages pass through
 * `redact`, so no credential the provider echoes back reaches a log or an answer.
 */
import { AppError } from '../../../../domain/shared/errors.js';

const MAX_MESSAGE_CHARS = 500;

/** The input is over the model's window, as Bedrock's models word it. */
const CONTEXT_LENGTH = /too long|context (window|length)|maximum (context|input)|exceeds? .*tokens|too many (input )?tokens/i;

const RETRYABLE = new Set([
  'ModelNotReadyException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelStreamErrorException',
  'ModelErrorException',
]);
const THROTTLED = new Set(['ThrottlingException', 'ServiceQuotaExceededException', 'TooManyRequestsException']);
const REFUSED_CREDENTIALS = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'IncompleteSignatureException',
  'CredentialsProviderError',
]);
const TIMEOUTS = new Set(['ModelTimeoutException', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

interface SdkError {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $metadata?: { httpStatusCode?: number };
}

export interface BedrockFailure {
  modelId: string;
  /** The model id Bedrock was asked for, and where. */
  upstreamModel: string;
  region: string;
  signal: AbortSignal;
  redact: (text: string) => string;
}

export function bedrockError(err: unknown, at: BedrockFailure): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as SdkError;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const status = e.$metadata?.httpStatusCode;
  const detail = at.redact(String(e.message ?? name)).slice(0, MAX_MESSAGE_CHARS);
  if (at.signal.aborted) {
    return new AppError('unavailable', 'The request was aborted before the upstream answered', { code: 'request_aborted', retryable: true, cause: err });
  }
  if (THROTTLED.has(name)) {
    return new AppError('rate_limit', `Upstream for model ${at.modelId} is rate limited by bedrock (${name}): ${detail}`, {
      code: 'rate_limit_exceeded',
      retryable: true,
      upstreamStatus: status ?? 429,
    });
  }
  if (TIMEOUTS.has(name)) {
    return new AppError('upstream', `Upstream for model ${at.modelId} did not answer in time (bedrock ${name})`, { code: 'upstream_timeout', retryable: true, upstreamStatus: status });
  }
  if (RETRYABLE.has(name) || (status !== undefined && status >= 500)) {
    return new AppError('upstream', `Upstream error for model ${at.modelId} (bedrock ${name}): ${detail}`, { code: 'upstream_error', retryable: true, upstreamStatus: status ?? 502 });
  }
  if (name === 'ValidationException') {
    const kind = CONTEXT_LENGTH.test(detail) ? 'context_length' : 'invalid_request';
    return new AppError(kind, detail, { code: kind === 'context_length' ? 'context_length_exceeded' : 'invalid_request_error', upstreamStatus: status ?? 400 });
  }
  if (REFUSED_CREDENTIALS.has(name) || status === 401 || status === 403) {
    return new AppError('upstream', `Upstream for model ${at.modelId} refused Sluice's AWS credentials (bedrock ${name}; check the AWS credentials and their bedrock:InvokeModel permission): ${detail}`, {
      code: 'upstream_error',
      upstreamStatus: status ?? 403,
    });
  }
  if (name === 'ResourceNotFoundException' || status === 404) {
    return new AppError('upstream', `Upstream for model ${at.modelId}: bedrock has no model ${at.upstreamModel} in ${at.region} (check upstream_model): ${detail}`, {
      code: 'upstream_error',
      upstreamStatus: status ?? 404,
    });
  }
  if (status === undefined) {
    const code = typeof e.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(e.code) ? e.code : 'connection failed';
    return new AppError('upstream', `Upstream for model ${at.modelId} is unreachable or closed the connection (${code})`, { code: 'upstream_error', retryable: true, cause: err });
  }
  return new AppError('upstream', `Upstream for model ${at.modelId} refused the request (bedrock ${name}, status ${status}): ${detail}`, { code: 'upstream_error', upstreamStatus: status });
}

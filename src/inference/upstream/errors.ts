/** Errors every upstream protocol raises alike. */
import { AppError } from '../../domain/shared/errors.js';

/** An answer Sluice cannot use: malformed JSON or SSE, a missing result, an SSE `error` event. */
export function upstreamProtocolError(modelId: string, message: string): AppError {
  return new AppError('upstream', `Upstream for model ${modelId} answered unexpectedly: ${message}`, {
    code: 'upstream_error',
    retryable: true,
  });
}

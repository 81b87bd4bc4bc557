/** Runtime failures of the ONNX backend, normalised to AppError (never raw in routes). */
import { AppError, isAppError } from '../../../domain/shared/errors.js';
import { OrtRuntimeError } from '../../runtime/ort-runtime.js';

/** API clients are told what is missing, not where: `sluice models list` shows the operator the path. */
export function modelFilesMissing(modelId: string, missing: readonly string[]): AppError {
  return new AppError(
    'unavailable',
    `Model ${modelId} is not installed: ${missing.join(', ')} missing from its model directory; run \`sluice models pull ${modelId}\``,
    { code: 'model_not_available', param: 'model' },
  );
}

export function noRuntimeFor(modelId: string): AppError {
  return new AppError('unavailable', `The onnx runtime has no implementation for model ${modelId}`, {
    code: 'model_not_available',
    param: 'model',
  });
}

/**
 * Any failure inside a runtime call → AppError. Loading and graph errors are internal:
 * the caller logs the cause, the client gets a generic 500.
 */
export function toOnnxError(err: unknown, modelId: string): AppError {
  if (isAppError(err)) return err;
  const what = err instanceof OrtRuntimeError ? 'the ONNX runtime failed' : 'an internal error occurred';
  return new AppError('internal', `Inference failed for model ${modelId}: ${what}`, { code: 'inference_error', cause: err });
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    throw new AppError('invalid_request', 'Request was cancelled', { code: 'request_cancelled' });
  }
}

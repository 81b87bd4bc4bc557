/** Failures of the gguf backend, normalised to AppError. */
import { AppError, isAppError } from '../../../domain/shared/errors.js';
import { ADD_GGUF_COMMAND } from './runtime.js';

/** API clients are told what is missing, not where: `sluice models list` shows the operator the path. */
export function ggufFileMissing(modelId: string): AppError {
  return new AppError('unavailable', `Model ${modelId} is not installed: no .gguf file in its model directory; run \`sluice models pull ${modelId}\``, {
    code: 'model_not_available',
    param: 'model',
  });
}

export function ggufRuntimeMissing(modelId: string): AppError {
  return new AppError('unavailable', `Model ${modelId} is not available: GGUF runtime not installed; run \`${ADD_GGUF_COMMAND}\``, {
    code: 'model_not_available',
    param: 'model',
  });
}

export function contextExceeded(modelId: string, promptTokens: number, contextSize: number): AppError {
  return new AppError(
    'context_length',
    `This model's context is ${contextSize} tokens; the messages take ${promptTokens}. Shorten the messages.`,
    { code: 'context_length_exceeded', param: 'messages' },
  );
}

export const cancelled = () => new AppError('invalid_request', 'Request was cancelled', { code: 'request_cancelled' });

export function toGgufError(err: unknown, modelId: string, signal?: AbortSignal): AppError {
  if (isAppError(err)) return err;
  if (signal?.aborted) return cancelled();
  return new AppError('internal', `Inference failed for model ${modelId}: the llama.cpp runtime failed`, { code: 'inference_error', cause: err });
}

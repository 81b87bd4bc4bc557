/** Domain → wire for files and batches, and the shared query-string readers of their lists. */
import type { Static } from '@sinclair/typebox';
import type { BatchRecord } from '../../domain/batches/batch.types.js';
import type { FileRecord } from '../../domain/files/files.types.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { AppError } from '../../domain/shared/errors.js';
import type { BatchObject, FileObject } from '../schemas/files-batches.js';

const seconds = (ms: number | null): number | null => (ms === null ? null : toUnixSeconds(ms));

export function fileWire(file: FileRecord): Static<typeof FileObject> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: toUnixSeconds(file.createdAtMs),
    expires_at: seconds(file.expiresAtMs),
    filename: file.filename,
    purpose: file.purpose,
    status: file.status,
    status_details: null,
    ...(file.isError ? { is_error: true } : {}),
  };
}

export function batchWire(batch: BatchRecord): Static<typeof BatchObject> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    model: batch.model,
    errors: batch.errors ? { object: 'list', data: batch.errors } : null,
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: toUnixSeconds(batch.createdAtMs),
    in_progress_at: seconds(batch.inProgressAtMs),
    expires_at: toUnixSeconds(batch.expiresAtMs),
    finalizing_at: seconds(batch.finalizingAtMs),
    completed_at: seconds(batch.completedAtMs),
    failed_at: seconds(batch.failedAtMs),
    expired_at: seconds(batch.expiredAtMs),
    cancelling_at: seconds(batch.cancellingAtMs),
    cancelled_at: seconds(batch.cancelledAtMs),
    request_counts: batch.requestCounts,
    usage: {
      input_tokens: batch.usage.inputTokens,
      input_tokens_details: { cached_tokens: batch.usage.cachedTokens },
      output_tokens: batch.usage.outputTokens,
      output_tokens_details: { reasoning_tokens: batch.usage.reasoningTokens },
      total_tokens: batch.usage.inputTokens + batch.usage.outputTokens,
    },
    metadata: batch.metadata,
  };
}

/** An optional query value restricted to `allowed`. */
export function readChoice<T extends string>(raw: string | undefined, allowed: readonly T[], param: string, code: string): T | undefined {
  if (raw === undefined) return undefined;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new AppError('invalid_request', `${param} must be one of ${allowed.join(', ')}`, { code, param });
}

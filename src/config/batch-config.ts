/**
 * The Batch API's configuration section, `batches:` (the runner's concurrency, attempts,
 * leases and shards; the endpoints a batch may use, each one Sluice can batch; absent:
 * the spec's, chat completions only), with BATCH_COMPLETION_WINDOW_SECONDS as a twin.
 */
import { Type } from '@sinclair/typebox';
import { BATCH_ENDPOINTS, BATCHABLE_ENDPOINTS } from '../domain/batches/batch.types.js';
import { envInteger } from './env.js';
import { PositiveInt } from './schema-kit.js';
import { configSection } from './section.js';

export interface BatchConfig {
  completionWindowSeconds: number;
  globalConcurrency: number;
  perBatchConcurrency: number;
  maxAttempts: number;
  leaseSeconds: number;
  shardLines: number;
  retryBaseMs: number;
  /** A batch `validating` with no heartbeat for this long is failed as interrupted. */
  validationTimeoutSeconds: number;
  /** The endpoints a batch may use (`batches.endpoints`); default the spec's, chat completions only. */
  endpoints: readonly string[];
}

const BatchesFileSchema = Type.Object(
  {
    completion_window_seconds: Type.Optional(PositiveInt('how long a batch may run before it expires')),
    global_concurrency: Type.Optional(PositiveInt('lines in flight per worker process')),
    per_batch_concurrency: Type.Optional(PositiveInt('lines in flight per batch')),
    max_attempts: Type.Optional(PositiveInt('attempts per line on retryable failures')),
    lease_seconds: Type.Optional(PositiveInt('how long a claimed shard stays owned without renewal')),
    shard_lines: Type.Optional(PositiveInt('input lines per shard')),
    retry_base_ms: Type.Optional(PositiveInt('first retry delay of a batch line; doubles per attempt, with jitter')),
    validation_timeout_seconds: Type.Optional(
      PositiveInt('a batch validating this long without a heartbeat (its creating process died) is failed'),
    ),
    endpoints: Type.Optional(
      Type.Array(Type.String(), {
        description: 'the endpoints a batch may use (default: /v1/chat/completions only)',
      }),
    ),
  },
  { additionalProperties: false },
);

export function resolveBatchEndpoints(listed: readonly string[] | undefined, problems: string[]): readonly string[] {
  if (listed === undefined) return BATCH_ENDPOINTS;
  for (const endpoint of listed) {
    if (!BATCHABLE_ENDPOINTS.includes(endpoint)) {
      problems.push(`batches.endpoints: ${endpoint} cannot be batched (one of ${BATCHABLE_ENDPOINTS.join(', ')})`);
    }
  }
  return [...new Set(listed.filter((e) => BATCHABLE_ENDPOINTS.includes(e)))];
}

export const batchesSection = configSection({
  key: 'batches',
  schema: BatchesFileSchema,
  resolve: ({ file: b = {}, env, problems }): BatchConfig => ({
    completionWindowSeconds: envInteger(env, 'BATCH_COMPLETION_WINDOW_SECONDS', problems, 1) ?? b.completion_window_seconds ?? 86_400,
    globalConcurrency: b.global_concurrency ?? 64,
    perBatchConcurrency: b.per_batch_concurrency ?? 32,
    maxAttempts: b.max_attempts ?? 4,
    leaseSeconds: b.lease_seconds ?? 30,
    shardLines: b.shard_lines ?? 500,
    retryBaseMs: b.retry_base_ms ?? 500,
    validationTimeoutSeconds: b.validation_timeout_seconds ?? 600,
    endpoints: resolveBatchEndpoints(b.endpoints, problems),
  }),
});

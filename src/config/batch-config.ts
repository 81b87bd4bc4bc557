/**
 * The Batch API's configuration section, `batches:` (the runner's concurrency, attempts,
 * leases and shards; the endpoints a batch may use; absent: the spec's, chat completions
 * only), with BATCH_COMPLETION_WINDOW_SECONDS as a twin. Which endpoints Sluice can batch
 * is known only once the app is assembled (the wire formats' and the features'), so that
 * `batches.endpoints` names only those is checked there (`unbatchableEndpoints`).
 */
import { Type } from '@sinclair/typebox';
import { BATCH_ENDPOINTS } from '../domain/batches/batch.types.js';
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

const resolveBatchEndpoints = (listed: readonly string[] | undefined): readonly string[] =>
  listed === undefined ? BATCH_ENDPOINTS : [...new Set(listed)];

/** The problems of `batches.endpoints` given the endpoints the app can batch (its assembled ones, by url): one per endpoint it cannot. */
export function unbatchableEndpoints(endpoints: readonly string[], batchable: readonly string[]): string[] {
  return endpoints
    .filter((endpoint) => !batchable.includes(endpoint))
    .map((endpoint) => `batches.endpoints: ${endpoint} cannot be batched (one of ${batchable.join(', ')})`);
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
    endpoints: resolveBatchEndpoints(b.endpoints),
  }),
});

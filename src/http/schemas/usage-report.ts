/** `GET /v1/usage` and `GET /admin/v1/usage`: usage summed per time bucket (domain/billing/usage-report.ts). */
import { Type } from '@sinclair/typebox';

const UnixSeconds = Type.Integer({ description: 'Unix timestamp, seconds' });

export const UsageReportQuerySchema = Type.Object({
  start_time: Type.Optional(Type.String({ description: 'Unix seconds, inclusive (default: 30 days before end_time)' })),
  end_time: Type.Optional(Type.String({ description: 'Unix seconds, exclusive (default: now)' })),
  bucket_width: Type.Optional(Type.String({ description: '1m, 1h or 1d (default 1d); at most 1500 buckets' })),
  group_by: Type.Optional(Type.String({ description: 'model, key, or (admin) project' })),
});

export const AdminUsageReportQuerySchema = Type.Object({
  ...UsageReportQuerySchema.properties,
  project_id: Type.Optional(Type.String({ maxLength: 64, description: 'one project (default: every project)' })),
});

const UsageResult = Type.Object({
  group: Type.Union([Type.String(), Type.Null()], { description: 'the model, key id or project id; null when not grouped or for calls made without a key' }),
  requests: Type.Integer(),
  input_tokens: Type.Integer({ description: 'every input token, those read from or written to a prompt cache included' }),
  input_cached_tokens: Type.Integer({ description: 'of input_tokens, those the engines read from their prompt cache (priced at the cached-input price)' }),
  input_cache_write_tokens: Type.Integer({ description: 'of input_tokens, those the engines wrote to their prompt cache (priced at the cache-write price)' }),
  output_tokens: Type.Integer(),
  cost_usd: Type.Number(),
});

export const UsageReport = Type.Object({
  object: Type.Literal('usage_report'),
  bucket_width: Type.String(),
  group_by: Type.Union([Type.String(), Type.Null()]),
  start_time: UnixSeconds,
  end_time: UnixSeconds,
  data: Type.Array(
    Type.Object({ start_time: UnixSeconds, end_time: UnixSeconds, results: Type.Array(UsageResult) }),
    { description: 'buckets that have usage, oldest first' },
  ),
});

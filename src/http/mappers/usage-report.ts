/** Usage report rows (one per bucket and group) → the wire's buckets with their results. */
import type { UsageBucketRow, UsageReportQuery } from '../../domain/billing/usage-reports.port.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { microsToUsd } from '../../domain/shared/money.js';

const WIDTH_NAMES = new Map([
  [60_000, '1m'],
  [3_600_000, '1h'],
  [86_400_000, '1d'],
]);

interface WireResult {
  group: string | null;
  requests: number;
  input_tokens: number;
  input_cached_tokens: number;
  input_cache_write_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export function usageReportToWire(query: UsageReportQuery, rows: readonly UsageBucketRow[]) {
  const buckets: Array<{ start_time: number; end_time: number; results: WireResult[] }> = [];
  for (const row of rows) {
    let bucket = buckets[buckets.length - 1];
    const start = toUnixSeconds(row.bucketStartMs);
    if (bucket?.start_time !== start) {
      bucket = { start_time: start, end_time: toUnixSeconds(row.bucketStartMs + query.bucketMs), results: [] };
      buckets.push(bucket);
    }
    bucket.results.push({
      group: row.group,
      requests: row.requests,
      input_tokens: row.inputTokens,
      input_cached_tokens: row.cachedInputTokens,
      input_cache_write_tokens: row.cacheWriteTokens,
      output_tokens: row.outputTokens,
      cost_usd: microsToUsd(row.costMicros),
    });
  }
  return {
    object: 'usage_report' as const,
    bucket_width: WIDTH_NAMES.get(query.bucketMs)!,
    group_by: query.groupBy,
    start_time: toUnixSeconds(query.startMs),
    end_time: toUnixSeconds(query.endMs),
    data: buckets,
  };
}

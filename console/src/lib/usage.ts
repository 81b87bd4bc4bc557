/**
 * The usage page's logic: the bucket width for a range, the report's buckets as chart
 * series (every bucket of the range, zero where nothing was used), totals per group, and
 * the CSV export.
 */
import type { UsageReport } from './types.js';

export type Metric = 'requests' | 'tokens' | 'cost_usd';

const HOUR = 3600;
const DAY = 86_400;

/** The narrowest width that keeps the range within the server's bucket limit and the chart readable. */
export function bucketWidthFor(startSeconds: number, endSeconds: number): '1m' | '1h' | '1d' {
  const span = endSeconds - startSeconds;
  if (span <= 6 * HOUR) return '1m';
  if (span <= 14 * DAY) return '1h';
  return '1d';
}

export const WIDTH_SECONDS: Record<string, number> = { '1m': 60, '1h': HOUR, '1d': DAY };

export interface Series {
  /** Bucket start times, Unix seconds, one per bucket of the range. */
  xs: number[];
  /** Group label → one value per bucket. */
  groups: Map<string, number[]>;
}

export const metricOf = (result: { requests: number; input_tokens: number; output_tokens: number; cost_usd: number }, metric: Metric): number =>
  metric === 'requests' ? result.requests : metric === 'tokens' ? result.input_tokens + result.output_tokens : result.cost_usd;

/** `label(group)` names a group for display (a key's name for its id); ungrouped rows are "all". */
export function toSeries(report: UsageReport, metric: Metric, label: (group: string | null) => string = (g) => g ?? 'all'): Series {
  const width = WIDTH_SECONDS[report.bucket_width] ?? DAY;
  const first = Math.floor(report.start_time / width) * width;
  const xs: number[] = [];
  for (let t = first; t < report.end_time; t += width) xs.push(t);
  const index = new Map(xs.map((t, i) => [t, i]));
  const groups = new Map<string, number[]>();
  for (const bucket of report.data) {
    const at = index.get(bucket.start_time);
    if (at === undefined) continue;
    for (const result of bucket.results) {
      const name = label(result.group);
      let values = groups.get(name);
      if (!values) {
        values = new Array<number>(xs.length).fill(0);
        groups.set(name, values);
      }
      values[at]! += metricOf(result, metric);
    }
  }
  return { xs, groups };
}

export interface Totals {
  requests: number;
  inputTokens: number;
  /** Of inputTokens, those read from / written to a prompt cache. */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  costUsd: number;
}

const noTotals = (): Totals => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, costUsd: 0 });

/** Sums per group label, largest cost first, and the overall total. */
export function totalsOf(report: UsageReport, label: (group: string | null) => string = (g) => g ?? 'all'): { rows: Array<[string, Totals]>; all: Totals } {
  const byGroup = new Map<string, Totals>();
  const all = noTotals();
  for (const bucket of report.data) {
    for (const r of bucket.results) {
      const name = label(r.group);
      const t = byGroup.get(name) ?? noTotals();
      for (const target of [t, all]) {
        target.requests += r.requests;
        target.inputTokens += r.input_tokens;
        target.cachedInputTokens += r.input_cached_tokens ?? 0;
        target.cacheWriteTokens += r.input_cache_write_tokens ?? 0;
        target.outputTokens += r.output_tokens;
        target.costUsd += r.cost_usd;
      }
      byGroup.set(name, t);
    }
  }
  const rows = [...byGroup.entries()].sort((a, b) => b[1].costUsd - a[1].costUsd || b[1].requests - a[1].requests);
  return { rows, all };
}

/** RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled. */
export const csvField = (value: string | number): string => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** One row per bucket and group, in the report's order. */
export function toCsv(report: UsageReport, label: (group: string | null) => string = (g) => g ?? ''): string {
  const lines = ['bucket_start_utc,bucket_end_utc,group,requests,input_tokens,input_cached_tokens,input_cache_write_tokens,output_tokens,cost_usd'];
  for (const bucket of report.data) {
    for (const r of bucket.results) {
      const fields = [
        new Date(bucket.start_time * 1000).toISOString(),
        new Date(bucket.end_time * 1000).toISOString(),
        label(r.group),
        r.requests,
        r.input_tokens,
        r.input_cached_tokens ?? 0,
        r.input_cache_write_tokens ?? 0,
        r.output_tokens,
        r.cost_usd,
      ];
      lines.push(fields.map(csvField).join(','));
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

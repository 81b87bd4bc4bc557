/**
 * Usage over time: requests, tokens and cost summed per time bucket and, optionally, per
 * model, key, project, tag or end user, aggregated by the database (the console's charts and CSV, and
 * `GET /v1/usage`). Buckets are UTC-aligned multiples of their width.
 */
import { invalidRequest } from '../shared/errors.js';
import type { UsageGroup, UsageReportQuery } from './usage-reports.port.js';

const BUCKET_WIDTHS = new Map<string, number>([
  ['1m', 60_000],
  ['1h', 3_600_000],
  ['1d', 86_400_000],
]);
const GROUPS = new Map<string, UsageGroup>([
  ['model', 'model'],
  ['key', 'key'],
  ['project', 'project'],
  ['tag', 'tag'],
  ['end_user', 'end_user'],
]);
/** Bounds the answer: at most this many buckets per series. */
export const MAX_BUCKETS = 1_500;

export interface UsageReportParams {
  start_time?: string;
  end_time?: string;
  bucket_width?: string;
  group_by?: string;
}

function unixSeconds(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,11}$/.test(raw)) throw invalidRequest(`${name} must be a Unix timestamp in seconds`, name);
  return Number(raw) * 1000;
}

/**
 * The query's time range and grouping, validated: `end_time` defaults to now, `start_time`
 * to 30 days before it, `bucket_width` to `1d`; `group_by` may be `model`, `key`, `tag`,
 * `end_user` or (for operators) `project`.
 */
export function readUsageReportQuery(params: UsageReportParams, projectId: string | null, nowMs: number): UsageReportQuery {
  const bucketMs = BUCKET_WIDTHS.get(params.bucket_width ?? '1d');
  if (bucketMs === undefined) throw invalidRequest('bucket_width must be one of 1m, 1h, 1d', 'bucket_width');
  const endMs = unixSeconds(params.end_time, 'end_time', nowMs);
  const startMs = unixSeconds(params.start_time, 'start_time', endMs - 30 * 86_400_000);
  if (startMs >= endMs) throw invalidRequest('start_time must be before end_time', 'start_time');
  if ((endMs - startMs) / bucketMs > MAX_BUCKETS) {
    throw invalidRequest(`The range holds more than ${MAX_BUCKETS} buckets of ${params.bucket_width ?? '1d'}: choose a wider bucket_width`, 'bucket_width');
  }
  let groupBy: UsageGroup | null = null;
  if (params.group_by !== undefined) {
    groupBy = GROUPS.get(params.group_by) ?? null;
    if (groupBy === null || (groupBy === 'project' && projectId !== null)) {
      throw invalidRequest(`group_by must be one of model, key, tag, end_user${projectId === null ? ', project' : ''}`, 'group_by');
    }
  }
  return { projectId, startMs, endMs, bucketMs, groupBy };
}

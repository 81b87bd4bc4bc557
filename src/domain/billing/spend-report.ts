/**
 * The spend report: requests, tokens and cost summed per key, model, tag, end user or
 * UTC day over a time range (`GET /v1/spend`, `GET /admin/v1/spend`, `sluice spend`).
 * The database aggregates it once and its rows are read a page at a time, so an export of
 * many groups (end users, say) streams without the whole report in memory.
 */
import { invalidRequest } from '../shared/errors.js';
import type { SpendGroup, SpendQuery } from './usage-reports.port.js';

const SPEND_GROUPS: readonly SpendGroup[] = ['key', 'model', 'tag', 'end_user', 'day'];
const DAY_MS = 86_400_000;

export interface SpendParams {
  group_by?: string;
  since?: string;
  until?: string;
}

/** A time given as Unix seconds or an ISO 8601 date or date-time (UTC unless it says otherwise). */
function timeOf(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (/^\d{1,11}$/.test(raw)) return Number(raw) * 1000;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw invalidRequest(`${name} must be Unix seconds or an ISO 8601 date (2026-01-31) or date-time`, name);
  return ms;
}

/**
 * The report's grouping and range, validated: `group_by` is required; `until` defaults to
 * now, `since` to the start of the UTC month `until` falls in (a month's spend so far).
 */
export function readSpendQuery(params: SpendParams, projectId: string | null, nowMs: number): SpendQuery {
  const groupBy = SPEND_GROUPS.find((g) => g === params.group_by);
  if (!groupBy) throw invalidRequest(`group_by must be one of ${SPEND_GROUPS.join(', ')}`, 'group_by');
  const untilMs = timeOf(params.until, 'until', nowMs);
  const monthStart = new Date(untilMs - 1);
  const sinceMs = timeOf(params.since, 'since', Date.UTC(monthStart.getUTCFullYear(), monthStart.getUTCMonth(), 1));
  if (sinceMs >= untilMs) throw invalidRequest('since must be before until', 'since');
  if (untilMs - sinceMs > 366 * DAY_MS) throw invalidRequest('The range may span at most 366 days', 'since');
  return { projectId, sinceMs, untilMs, groupBy };
}

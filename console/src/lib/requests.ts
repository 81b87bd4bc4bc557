/** The request log's pages: the list's query from the filter form, the attempts on a timeline, the cost held against the cost settled, bodies as text. */
import { query } from './api.js';
import type { RequestAttempt, RequestDetail } from './types.js';

/** The filter form's fields, as typed (every one a string; empty: no filter). */
export interface RequestFilters {
  key_id: string;
  model: string;
  /** An HTTP status, or `error` for any of 400 or more. */
  status: string;
  tag: string;
  session_id: string;
  /** `YYYY-MM-DDTHH:MM` (a datetime-local input), read as UTC. */
  since: string;
  until: string;
  min_cost_usd: string;
}

export const NO_FILTERS: RequestFilters = { key_id: '', model: '', status: '', tag: '', session_id: '', since: '', until: '', min_cost_usd: '' };

/** A datetime-local input's value, read as UTC, in Unix seconds; undefined when empty or unreadable. */
export function unixOfInput(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const ms = Date.parse(`${value}Z`);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The list route with the filters given (trimmed; empty ones left out), one page of `limit` after the cursor. */
export function requestsPath(filters: RequestFilters, limit: number, after?: string): string {
  return `/v1/requests${query({
    limit,
    after,
    key_id: filters.key_id.trim(),
    model: filters.model.trim(),
    status: filters.status.trim(),
    tag: filters.tag.trim(),
    session_id: filters.session_id.trim(),
    since: unixOfInput(filters.since),
    until: unixOfInput(filters.until),
    min_cost_usd: filters.min_cost_usd.trim(),
  })}`;
}

export function requestTone(status: number): 'ok' | 'bad' | 'busy' {
  if (status === 429) return 'busy';
  return status >= 400 ? 'bad' : 'ok';
}

/** Milliseconds for people: `840 ms`, `12.3 s`; an em dash for none. */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 10_000 ? `${Math.round(ms).toLocaleString('en-US')} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export interface TimelineBar {
  deployment: string;
  /** Where the attempt starts and how long it lasts, in percent of the call's whole time. */
  offsetPct: number;
  widthPct: number;
  outcome: 'ok' | 'failed' | 'unknown';
  /** What the bar says in words (also its accessible name). */
  label: string;
}

const percent = (value: number): number => Math.round(value * 10) / 10;

/** The attempts laid on the call's time: each at its start, as long as it lasted (at least a sliver, so a fast failure shows). */
export function attemptTimeline(attempts: readonly RequestAttempt[], totalMs: number): TimelineBar[] {
  const whole = Math.max(totalMs, 1, ...attempts.map((a) => a.started_ms + a.duration_ms));
  return attempts.map((a) => {
    const outcome = a.error_code !== null || (a.status !== null && a.status >= 400) ? 'failed' : a.status === null ? 'unknown' : 'ok';
    const answer = a.status === null ? 'no answer' : String(a.status);
    return {
      deployment: a.deployment,
      offsetPct: percent((a.started_ms / whole) * 100),
      widthPct: Math.max(0.5, percent((a.duration_ms / whole) * 100)),
      outcome,
      label: `${a.deployment}${a.provider ? ` (${a.provider})` : ''}: ${answer}${a.error_code ? ` ${a.error_code}` : ''}, from ${duration(a.started_ms)} for ${duration(a.duration_ms)}`,
    };
  });
}

/** What was held before the call and what it settled at; the difference went back to the balance. Dollars to the micro-dollar. */
export function holdAndSettlement(detail: Pick<RequestDetail, 'hold_usd' | 'settled_usd'>): { hold: number | null; settled: number | null; released: number | null } {
  const { hold_usd: hold, settled_usd: settled } = detail;
  const released = hold !== null && settled !== null ? Math.round((hold - settled) * 1e6) / 1e6 : null;
  return { hold, settled, released };
}

/** A logged body as text: JSON pretty-printed, a streamed answer's text as it is. */
export function prettyBody(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? 'null';
}

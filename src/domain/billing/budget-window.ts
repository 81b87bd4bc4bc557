/**
 * A key budget's windows, in UTC calendar terms: the day (from midnight), the ISO week
 * (from Monday's midnight), the month (from the 1st's midnight), or the key's whole life
 * (`total`, which never resets). Spend counts within the window the moment falls in.
 */
import type { BudgetWindow } from '../identity/key-policy.types.js';

const DAY_MS = 86_400_000;

/** The window a moment falls in: from `startMs` (inclusive) to `endMs` (exclusive; null: never ends). */
export interface WindowSpan {
  startMs: number;
  endMs: number | null;
}

/** The span of `window` that `nowMs` falls in. */
export function windowSpan(window: BudgetWindow, nowMs: number): WindowSpan {
  const dayStart = Math.floor(nowMs / DAY_MS) * DAY_MS;
  switch (window) {
    case 'day':
      return { startMs: dayStart, endMs: dayStart + DAY_MS };
    case 'week': {
      // getUTCDay(): 0 is Sunday; the ISO week begins on Monday.
      const sinceMonday = (new Date(dayStart).getUTCDay() + 6) % 7;
      const startMs = dayStart - sinceMonday * DAY_MS;
      return { startMs, endMs: startMs + 7 * DAY_MS };
    }
    case 'month': {
      const date = new Date(dayStart);
      const year = date.getUTCFullYear();
      const month = date.getUTCMonth();
      return { startMs: Date.UTC(year, month, 1), endMs: Date.UTC(year, month + 1, 1) };
    }
    case 'total':
      return { startMs: 0, endMs: null };
  }
}

/** When a window ends, as the refusals write it (`2026-12-08T00:00:00Z`); null for a window that never ends. */
export function resetTimeOf(span: WindowSpan): string | null {
  return span.endMs === null ? null : new Date(span.endMs).toISOString().replace('.000Z', 'Z');
}

/** A key budget's UTC calendar windows (src/domain/billing/budget-window.ts). */
import { describe, expect, it } from 'vitest';
import { resetTimeOf, windowSpan } from '../../../src/domain/billing/budget-window.js';

const at = (iso: string) => Date.parse(iso);
const span = (startIso: string, endIso: string | null) => ({ startMs: at(startIso), endMs: endIso === null ? null : at(endIso) });

describe('budget windows', () => {
  it('a day runs from UTC midnight to the next, its first millisecond in, its last out', () => {
    expect(windowSpan('day', at('2026-12-07T18:40:00.123Z'))).toEqual(span('2026-12-07T00:00:00Z', '2026-12-08T00:00:00Z'));
    expect(windowSpan('day', at('2026-12-08T00:00:00.000Z'))).toEqual(span('2026-12-08T00:00:00Z', '2026-12-09T00:00:00Z'));
    expect(windowSpan('day', at('2026-12-07T23:59:59.999Z'))).toEqual(span('2026-12-07T00:00:00Z', '2026-12-08T00:00:00Z'));
  });

  it('a week is the ISO week: Monday 00:00 UTC to the next Monday', () => {
    // 2026-12-07 is a Monday; 2026-12-13 a Sunday.
    expect(windowSpan('week', at('2026-12-07T00:00:00Z'))).toEqual(span('2026-12-07T00:00:00Z', '2026-12-14T00:00:00Z'));
    expect(windowSpan('week', at('2026-12-13T23:59:59.999Z'))).toEqual(span('2026-12-07T00:00:00Z', '2026-12-14T00:00:00Z'));
    expect(windowSpan('week', at('2026-12-14T00:00:00Z'))).toEqual(span('2026-12-14T00:00:00Z', '2026-12-21T00:00:00Z'));
    // Across a year's end: Thursday 2026-12-31 is in the week of Monday 2026-12-28.
    expect(windowSpan('week', at('2026-12-31T12:00:00Z'))).toEqual(span('2026-12-28T00:00:00Z', '2027-01-04T00:00:00Z'));
    // The week of the epoch (a Thursday) began on Monday 1969-12-29.
    expect(windowSpan('week', at('1970-01-01T05:00:00Z'))).toEqual(span('1969-12-29T00:00:00Z', '1970-01-05T00:00:00Z'));
  });

  it('a month runs from the 1st to the next 1st, leap February and December included', () => {
    expect(windowSpan('month', at('2026-12-07T18:40:00Z'))).toEqual(span('2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z'));
    expect(windowSpan('month', at('2028-02-29T23:59:59.999Z'))).toEqual(span('2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z'));
    expect(windowSpan('month', at('2027-03-01T00:00:00Z'))).toEqual(span('2027-03-01T00:00:00Z', '2027-04-01T00:00:00Z'));
    expect(windowSpan('month', at('2027-01-31T23:59:59.999Z'))).toEqual(span('2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z'));
  });

  it('total never resets', () => {
    expect(windowSpan('total', at('2026-12-07T18:40:00Z'))).toEqual({ startMs: 0, endMs: null });
  });

  it('the reset time is the window’s end, to the second, in UTC', () => {
    expect(resetTimeOf(windowSpan('day', at('2026-12-07T18:40:00Z')))).toBe('2026-12-08T00:00:00Z');
    expect(resetTimeOf(windowSpan('week', at('2026-12-09T01:00:00Z')))).toBe('2026-12-14T00:00:00Z');
    expect(resetTimeOf(windowSpan('total', at('2026-12-09T01:00:00Z')))).toBeNull();
  });
});

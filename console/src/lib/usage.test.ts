import { describe, expect, it } from 'vitest';
import { bucketWidthFor, csvField, toCsv, toSeries, totalsOf } from './usage.js';
import type { UsageReport } from './types.js';

const HOUR = 3600;
const DAY = 86_400;
const T0 = 1_764_028_800; // 2025-11-25T00:00:00Z

const report: UsageReport = {
  bucket_width: '1h',
  group_by: 'model',
  start_time: T0,
  end_time: T0 + 4 * HOUR,
  data: [
    {
      start_time: T0 + HOUR,
      end_time: T0 + 2 * HOUR,
      results: [
        { group: 'a', requests: 2, input_tokens: 10, input_cached_tokens: 6, input_cache_write_tokens: 2, output_tokens: 5, cost_usd: 0.5 },
        { group: 'b', requests: 1, input_tokens: 1, output_tokens: 1, cost_usd: 2 },
      ],
    },
    { start_time: T0 + 3 * HOUR, end_time: T0 + 4 * HOUR, results: [{ group: 'a', requests: 4, input_tokens: 20, output_tokens: 0, cost_usd: 1 }] },
  ],
};

describe('usage page logic', () => {
  it('picks minute buckets up to 6 hours, hourly up to 14 days, daily beyond', () => {
    expect(bucketWidthFor(T0, T0 + 6 * HOUR)).toBe('1m');
    expect(bucketWidthFor(T0, T0 + 6 * HOUR + 1)).toBe('1h');
    expect(bucketWidthFor(T0, T0 + 14 * DAY)).toBe('1h');
    expect(bucketWidthFor(T0, T0 + 14 * DAY + 1)).toBe('1d');
  });

  it('spreads the report over every bucket of the range, zero where nothing was used', () => {
    const series = toSeries(report, 'requests');
    expect(series.xs).toEqual([T0, T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR]);
    expect(Object.fromEntries(series.groups)).toEqual({ a: [0, 2, 0, 4], b: [0, 1, 0, 0] });
    expect(Object.fromEntries(toSeries(report, 'tokens').groups)).toEqual({ a: [0, 15, 0, 20], b: [0, 2, 0, 0] });
  });

  it('merges groups that share a display name', () => {
    const series = toSeries(report, 'cost_usd', () => 'same');
    expect(Object.fromEntries(series.groups)).toEqual({ same: [0, 2.5, 0, 1] });
  });

  it('totals per group, by cost first, and overall', () => {
    const { rows, all } = totalsOf(report);
    expect(rows.map(([name]) => name)).toEqual(['b', 'a']);
    expect(rows[1]![1]).toEqual({ requests: 6, inputTokens: 30, cachedInputTokens: 6, cacheWriteTokens: 2, outputTokens: 5, costUsd: 1.5 });
    expect(all).toEqual({ requests: 7, inputTokens: 31, cachedInputTokens: 6, cacheWriteTokens: 2, outputTokens: 6, costUsd: 3.5 });
  });

  it('exports CSV with a header, one row per bucket and group, quoting what needs it', () => {
    const csv = toCsv(report, (g) => (g === 'b' ? 'key "b", old' : (g ?? '')));
    expect(csv.split('\r\n')).toEqual([
      'bucket_start_utc,bucket_end_utc,group,requests,input_tokens,input_cached_tokens,input_cache_write_tokens,output_tokens,cost_usd',
      '2025-11-25T01:00:00.000Z,2025-11-25T02:00:00.000Z,a,2,10,6,2,5,0.5',
      '2025-11-25T01:00:00.000Z,2025-11-25T02:00:00.000Z,"key ""b"", old",1,1,0,0,1,2',
      '2025-11-25T03:00:00.000Z,2025-11-25T04:00:00.000Z,a,4,20,0,0,0,1',
      '',
    ]);
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField(12)).toBe('12');
  });
});

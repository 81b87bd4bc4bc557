import { describe, expect, it } from 'vitest';
import { attemptTimeline, duration, holdAndSettlement, NO_FILTERS, prettyBody, requestsPath, requestTone, unixOfInput } from './requests.js';
import type { RequestAttempt } from './types.js';

describe('the request list query', () => {
  it('no filters: the page size only; a cursor goes on as `after`', () => {
    expect(requestsPath(NO_FILTERS, 25)).toBe('/v1/requests?limit=25');
    expect(requestsPath(NO_FILTERS, 25, 'req_9')).toBe('/v1/requests?limit=25&after=req_9');
  });

  it('every filter, trimmed, with the times in Unix seconds (UTC) and values encoded', () => {
    const path = requestsPath(
      {
        key_id: ' key_1 ',
        model: 'gpt-oss-120b',
        status: 'error',
        tag: 'team a&b',
        session_id: 'sess/1',
        since: '2026-12-07T10:00',
        until: '2026-12-07T11:30',
        min_cost_usd: '0.5',
      },
      20,
    );
    expect(path).toBe(
      '/v1/requests?limit=20&key_id=key_1&model=gpt-oss-120b&status=error&tag=team+a%26b&session_id=sess%2F1&since=1796637600&until=1796643000&min_cost_usd=0.5',
    );
  });

  it('a time that is not a datetime-local value is no filter', () => {
    expect(unixOfInput('')).toBeUndefined();
    expect(unixOfInput('yesterday')).toBeUndefined();
    expect(unixOfInput('2026-13-45T99:99')).toBeUndefined();
    expect(unixOfInput('2026-12-07T10:00:30')).toBe(1_796_637_630);
    expect(requestsPath({ ...NO_FILTERS, since: 'soon' }, 20)).toBe('/v1/requests?limit=20');
  });
});

describe('the attempts timeline', () => {
  const attempt = (deployment: string, started_ms: number, duration_ms: number, status: number | null, error_code: string | null = null): RequestAttempt => ({
    deployment,
    provider: 'openai',
    status,
    error_code,
    started_ms,
    duration_ms,
  });

  it('lays each attempt at its start, as long as it lasted, in percent of the whole call', () => {
    const bars = attemptTimeline([attempt('gpu-a', 0, 100, 503, 'upstream_error'), attempt('gpu-b', 100, 50, null, 'upstream_unreachable'), attempt('backup', 150, 250, 200)], 500);
    expect(bars).toEqual([
      { deployment: 'gpu-a', offsetPct: 0, widthPct: 20, outcome: 'failed', label: 'gpu-a (openai): 503 upstream_error, from 0 ms for 100 ms' },
      { deployment: 'gpu-b', offsetPct: 20, widthPct: 10, outcome: 'failed', label: 'gpu-b (openai): no answer upstream_unreachable, from 100 ms for 50 ms' },
      { deployment: 'backup', offsetPct: 30, widthPct: 50, outcome: 'ok', label: 'backup (openai): 200, from 150 ms for 250 ms' },
    ]);
  });

  it('an attempt that outlasts the recorded total stretches the scale; an instant one still shows; no answer and no error is unknown', () => {
    const [late, instant] = attemptTimeline([attempt('slow', 0, 2_000, 200), attempt('fast', 2_000, 0, null)], 1_000);
    expect(late).toMatchObject({ offsetPct: 0, widthPct: 100, outcome: 'ok' });
    expect(instant).toMatchObject({ offsetPct: 100, widthPct: 0.5, outcome: 'unknown' });
    expect(attemptTimeline([], 0)).toEqual([]);
  });
});

describe('cost, statuses, durations and bodies', () => {
  it('the hold against the settlement: what went back to the balance, to the micro-dollar', () => {
    expect(holdAndSettlement({ hold_usd: 0.0042, settled_usd: 0.001234 })).toEqual({ hold: 0.0042, settled: 0.001234, released: 0.002966 });
    expect(holdAndSettlement({ hold_usd: null, settled_usd: 0.5 })).toEqual({ hold: null, settled: 0.5, released: null });
  });

  it('a status tone: 2xx ok, 429 busy, any other error bad', () => {
    expect([200, 201, 429, 400, 402, 404, 500, 503].map(requestTone)).toEqual(['ok', 'ok', 'busy', 'bad', 'bad', 'bad', 'bad', 'bad']);
  });

  it('durations in milliseconds up to ten seconds, then seconds', () => {
    expect([duration(null), duration(0), duration(840.4), duration(9_999), duration(12_345)]).toEqual(['—', '0 ms', '840 ms', '9,999 ms', '12.3 s']);
  });

  it('bodies: JSON pretty-printed, text as it is', () => {
    expect(prettyBody({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).toBe(
      '{\n  "model": "m",\n  "messages": [\n    {\n      "role": "user",\n      "content": "hi"\n    }\n  ]\n}',
    );
    expect(prettyBody('data: {"x":1}\n\n')).toBe('data: {"x":1}\n\n');
    expect(prettyBody(null)).toBe('null');
  });
});

import { describe, expect, it } from 'vitest';
import { isoTimestampOf } from '../../src/domain/shared/clock.js';

describe('isoTimestampOf', () => {
  it('equals Date’s toISOString across seconds, padding and the cached second changing back and forth', () => {
    const base = Date.UTC(2026, 10, 26, 1, 22, 44);
    const cases = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 59_999, 60_000, 86_399_999, 86_400_000, -1000, 5, 1_234_567_890];
    for (const offset of cases) {
      const ms = base + offset;
      expect(isoTimestampOf(ms), String(offset)).toBe(new Date(ms).toISOString());
    }
    expect(isoTimestampOf(base + 12.7)).toBe(new Date(base + 12).toISOString());
    expect(isoTimestampOf(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});

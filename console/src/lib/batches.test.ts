import { describe, expect, it } from 'vitest';
import { anyActive, progressPercent, statusTone, summariseErrorCodes } from './batches.js';
import type { Batch } from './types.js';

describe('batch display logic', () => {
  it('counts completed and failed lines as progress, 0 while the total is unknown', () => {
    expect(progressPercent({ total: 0, completed: 0, failed: 0 })).toBe(0);
    expect(progressPercent({ total: 3, completed: 1, failed: 0 })).toBe(33);
    expect(progressPercent({ total: 4, completed: 2, failed: 2 })).toBe(100);
  });

  it('keeps polling while any batch can still move', () => {
    const batch = (status: string) => ({ status }) as Batch;
    expect(anyActive([batch('completed'), batch('cancelled')])).toBe(false);
    expect(anyActive([batch('completed'), batch('finalizing')])).toBe(true);
    expect(anyActive([batch('cancelling')])).toBe(true);
  });

  it('gives each status a tone', () => {
    expect(['completed', 'failed', 'expired', 'cancelled', 'in_progress', 'validating'].map(statusTone)).toEqual(['ok', 'bad', 'bad', 'muted', 'busy', 'busy']);
  });

  it('counts an error file by code: the upstream error, else the line error, else the status', () => {
    const lines = [
      { custom_id: 'a', response: { status_code: 400, body: { error: { code: 'context_length_exceeded' } } }, error: null },
      { custom_id: 'b', response: null, error: { code: 'batch_cancelled', message: 'x' } },
      { custom_id: 'c', response: null, error: { code: 'batch_cancelled', message: 'x' } },
      { custom_id: 'd', response: { status_code: 502, body: {} }, error: null },
    ];
    const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\nnot json\n`;
    expect(summariseErrorCodes(text)).toEqual([
      { code: 'batch_cancelled', count: 2 },
      { code: 'context_length_exceeded', count: 1 },
      { code: 'http_502', count: 1 },
      { code: 'unreadable', count: 1 },
    ]);
  });
});

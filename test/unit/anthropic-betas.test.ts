import { describe, expect, it } from 'vitest';
import { betasOf } from '../../src/http/anthropic-betas.js';

describe('betasOf', () => {
  it('splits comma-separated values across repeated headers, trimmed, each once', () => {
    expect(betasOf(['interleaved-thinking-2025-05-14, context-1m-2025-08-07', 'context-1m-2025-08-07,prompt-caching-2024-07-31'])).toEqual([
      'interleaved-thinking-2025-05-14',
      'context-1m-2025-08-07',
      'prompt-caching-2024-07-31',
    ]);
  });

  it('leaves out what is not a plain flag name, and an absent header is none', () => {
    expect(betasOf('ok-1,bad value,x\r\ny,,' + 'a'.repeat(129))).toEqual(['ok-1']);
    expect(betasOf(undefined)).toEqual([]);
  });

  it('keeps at most 32', () => {
    expect(betasOf(Array.from({ length: 40 }, (_, i) => `flag-${i}`).join(','))).toHaveLength(32);
  });
});

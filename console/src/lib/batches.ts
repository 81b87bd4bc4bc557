/** Batch display logic: terminal states, progress, and the error file's codes counted. */
import type { Batch } from './types.js';

const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

export const isTerminal = (status: string): boolean => TERMINAL.has(status);

/** Whether a list needs refreshing: some batch may still move. */
export const anyActive = (batches: readonly Batch[]): boolean => batches.some((b) => !isTerminal(b.status));

/** Lines done (completed or failed) out of the total, 0..100; 0 while the total is unknown. */
export function progressPercent(counts: Batch['request_counts']): number {
  if (counts.total <= 0) return 0;
  return Math.min(100, Math.round(((counts.completed + counts.failed) / counts.total) * 100));
}

/** The chip's tone for a status: what a glance should tell. */
export function statusTone(status: string): 'ok' | 'bad' | 'busy' | 'muted' {
  if (status === 'completed') return 'ok';
  if (status === 'failed' || status === 'expired') return 'bad';
  if (status === 'cancelled' || status === 'cancelling') return 'muted';
  return 'busy';
}

/**
 * Counts an error file's lines by error code (`response.body.error.code`, else
 * `error.code`, else the HTTP status), most frequent first. Lines that are not JSON count
 * as `unreadable`.
 */
export function summariseErrorCodes(jsonl: string): Array<{ code: string; count: number }> {
  const counts = new Map<string, number>();
  for (const line of jsonl.split('\n')) {
    if (line.trim() === '') continue;
    let code = 'unreadable';
    try {
      const record = JSON.parse(line) as {
        error?: { code?: string | null } | null;
        response?: { status_code?: number; body?: { error?: { code?: string | null } } } | null;
      };
      code = record.response?.body?.error?.code ?? record.error?.code ?? (record.response?.status_code ? `http_${record.response.status_code}` : 'unknown');
    } catch {
      code = 'unreadable';
    }
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  return [...counts.entries()].map(([code, n]) => ({ code, count: n })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

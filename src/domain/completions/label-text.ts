/** Candidate labels for zero-shot models written as text (a system message, `instructions`). */
import { invalidRequest } from '../shared/errors.js';

export const MAX_LABELS = 10;

/**
 * `[a, b, c]` or `a, b, c` (quotes around a label are dropped) → the labels; null when the
 * text holds none. At most MAX_LABELS, as `categories` allows.
 */
export function parseLabelText(text: string, param: string): string[] | null {
  let inner = text.trim();
  if (inner.startsWith('[') && inner.endsWith(']')) inner = inner.slice(1, -1);
  const labels = inner
    .split(',')
    .map((l) => l.trim().replace(/^["']|["']$/g, '').trim())
    .filter((l) => l !== '');
  if (labels.length === 0) return null;
  if (labels.length > MAX_LABELS) throw invalidRequest(`At most ${MAX_LABELS} candidate labels are allowed, got ${labels.length}`, param);
  return labels;
}

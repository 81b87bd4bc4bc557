/** Reading GLiNER task options from the request's `metadata`; every bad value is a 400 naming it. */
import { invalidRequest } from '../../../../domain/shared/errors.js';

export function readThreshold(options: Record<string, unknown>, fallback = 0.5): number {
  const t = options.threshold;
  if (t === undefined || t === null) return fallback;
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > 1) throw invalidRequest('metadata.threshold must be a number between 0 and 1', 'metadata.threshold');
  return t;
}

export function readChoice<T extends string>(options: Record<string, unknown>, key: string, allowed: readonly T[], fallback: T): T {
  const v = options[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw invalidRequest(`metadata.${key} must be one of ${allowed.join(', ')}`, `metadata.${key}`);
  }
  return v as T;
}

export function readStringList(options: Record<string, unknown>, key: string): string[] | null {
  const v = options[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.trim() === '')) {
    throw invalidRequest(`metadata.${key} must be an array of non-empty strings`, `metadata.${key}`);
  }
  return v.map((x: string) => x.trim());
}

/** `schema`: an object of group → array of strings. */
export function readSchema(options: Record<string, unknown>): Record<string, string[]> {
  const v = options.schema;
  const bad = () => invalidRequest('metadata.schema must be an object whose values are arrays of strings', 'metadata.schema');
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.keys(v).length === 0) throw bad();
  // Group names are the client's: null prototype, so `__proto__` is stored, not swallowed.
  const out = Object.create(null) as Record<string, string[]>;
  for (const [group, entries] of Object.entries(v)) {
    if (!Array.isArray(entries) || entries.length === 0 || entries.some((e) => typeof e !== 'string' || e.trim() === '')) throw bad();
    out[group] = entries.map((e: string) => e.trim());
  }
  return out;
}

export const MAX_LABELS = 50;

export function assertLabelCount(labels: readonly string[], param: string): void {
  if (labels.length === 0) throw invalidRequest('At least one label is needed', param);
  if (labels.length > MAX_LABELS) throw invalidRequest(`At most ${MAX_LABELS} labels are allowed, got ${labels.length}`, param);
}

/**
 * Field readers for the inference request bodies. Validation lives in the domain (not in
 * route schemas) because the batch runner sends bodies through the same port, and both
 * must reject the same way: one message, `invalid_request_error`, the exact `param`.
 */
import { invalidRequest } from '../shared/errors.js';

export type Body = Record<string, unknown>;

export const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

export function requireObject(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest(`The request body must be a JSON object, got ${describe(body)}`, null);
  }
  return body as Body;
}

export function requiredString(body: Body, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw invalidRequest(`${field} is required`, field);
  if (typeof value !== 'string' || value === '') throw invalidRequest(`${field} must be a non-empty string`, field);
  return value;
}

export function optionalString(body: Body, field: string, param = field): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidRequest(`${param} must be a string, got ${describe(value)}`, param);
  return value;
}

export function optionalBoolean(body: Body, field: string, param = field): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidRequest(`${param} must be a boolean, got ${describe(value)}`, param);
  return value;
}

export function optionalNumber(body: Body, field: string, min: number, max: number, param = field): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidRequest(`${param} must be a number between ${min} and ${max}`, param);
  }
  return value;
}

export function optionalInteger(body: Body, field: string, min: number, param = field): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalidRequest(`${param} must be an integer of at least ${min}`, param);
  }
  return value;
}

export function optionalObject(body: Body, field: string, param = field): Body | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidRequest(`${param} must be an object, got ${describe(value)}`, param);
  return value as Body;
}

/** `categories`: candidate labels for zero-shot models, 1 to 10 non-empty strings. */
export function optionalLabels(body: Body, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest(`${field} must be a non-empty array of strings`, field);
  value.forEach((label, i) => {
    if (typeof label !== 'string' || label.trim() === '') throw invalidRequest(`${field}[${i}] must be a non-empty string`, `${field}[${i}]`);
  });
  return checkLabelCount(value.map((l: string) => l.trim()), field);
}

export const MAX_LABELS = 10;

export function checkLabelCount(labels: string[], param: string): string[] {
  if (labels.length > MAX_LABELS) {
    throw invalidRequest(`At most ${MAX_LABELS} candidate labels are allowed, got ${labels.length}`, param);
  }
  return labels;
}

/**
 * Candidate labels written as text: `[a, b, c]` or `a, b, c` (quotes around a label are
 * dropped). Null when the text holds no labels.
 */
export function parseLabelText(text: string, param: string): string[] | null {
  let inner = text.trim();
  if (inner.startsWith('[') && inner.endsWith(']')) inner = inner.slice(1, -1);
  const labels = inner
    .split(',')
    .map((l) => l.trim().replace(/^["']|["']$/g, '').trim())
    .filter((l) => l !== '');
  return labels.length === 0 ? null : checkLabelCount(labels, param);
}

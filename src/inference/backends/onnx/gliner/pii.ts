/**
 * gliner-multi-pii-v1: personal data found (`extract-pii`) or masked (`redact`).
 * Labels come from `categories` (groups below), explicit `labels`, or every group.
 * Output as the hosted service answers (digest §1.3): entities with character offsets
 * (end exclusive), entities_by_label, and redacted_text for `redact` only.
 */
import { invalidRequest } from '../../../../domain/shared/errors.js';
import type { Entity, GlinerEngine } from './engine.js';
import { assertLabelCount, readChoice, readStringList, readThreshold } from './options.js';

export const PII_CATEGORIES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  identity: ['person', 'organization', 'date of birth', 'social security number', 'passport number', 'driver license number', 'national id number'],
  contact: ['email', 'phone number', 'address', 'social media handle', 'ip address'],
  financial: ['credit card number', 'bank account number', 'iban', 'transaction number', 'tax id'],
  medical: ['medical condition', 'medication', 'health insurance number', 'medical record number'],
  credentials: ['username', 'password', 'api key', 'access token'],
});

/** Own groups only: category names come from requests. */
const isCategory = (name: string): boolean => Object.hasOwn(PII_CATEGORIES, name);

const MASKS = ['label', 'char', 'generic'] as const;
type Mask = (typeof MASKS)[number];

function piiLabels(options: Record<string, unknown>, requested: readonly string[] | null): string[] {
  const explicit = readStringList(options, 'labels');
  if (explicit) return explicit;
  const categories = readStringList(options, 'categories') ?? (requested && requested.every(isCategory) ? [...requested] : null);
  if (categories) {
    const unknown = categories.filter((c) => !isCategory(c));
    if (unknown.length > 0) {
      throw invalidRequest(`metadata.categories: unknown ${unknown.join(', ')} (known: ${Object.keys(PII_CATEGORIES).join(', ')})`, 'metadata.categories');
    }
    return [...new Set(categories.flatMap((c) => PII_CATEGORIES[c]!))];
  }
  if (requested && requested.length > 0) return [...requested];
  return Object.values(PII_CATEGORIES).flat();
}

function replacementOf(options: Record<string, unknown>): string {
  const r = options.replacement_char;
  if (r === undefined || r === null) return '*';
  if (typeof r !== 'string' || [...r].length !== 1) throw invalidRequest('metadata.replacement_char must be a single character', 'metadata.replacement_char');
  return r;
}

export function redact(text: string, entities: readonly Entity[], mask: Mask, replacement: string): string {
  let out = text;
  for (const e of [...entities].sort((a, b) => b.start - a.start)) {
    const by =
      mask === 'label' ? `[${e.label.toUpperCase().replace(/\s+/g, '_')}]` : mask === 'generic' ? '[REDACTED]' : replacement.repeat([...e.text].length);
    out = out.slice(0, e.start) + by + out.slice(e.end);
  }
  return out;
}

/** Labels are the client's strings: a null-prototype object keeps `__proto__` an ordinary key. */
export function byLabel(entities: readonly Entity[]): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  for (const e of entities) {
    const list = (out[e.label] ??= []);
    if (!list.includes(e.text)) list.push(e.text);
  }
  return out;
}

export async function runPii(engine: GlinerEngine, text: string, options: Record<string, unknown>, requested: readonly string[] | null): Promise<Record<string, unknown>> {
  const usecase = readChoice(options, 'usecase', ['extract-pii', 'redact'] as const, 'extract-pii');
  const threshold = readThreshold(options);
  const mask = readChoice(options, 'mask', MASKS, options.replacement_char !== undefined ? 'char' : 'label');
  const replacement = replacementOf(options);
  const labels = piiLabels(options, requested);
  assertLabelCount(labels, 'metadata.labels');
  const found = await engine.extract(text, labels, threshold);
  const entities = found.map((e) => ({ text: e.text, label: e.label, start: e.start, end: e.end, score: Math.round(e.score * 10_000) / 10_000 }));
  const result: Record<string, unknown> = {};
  if (usecase === 'redact') result.redacted_text = redact(text, found, mask, replacement);
  result.entities = entities;
  result.entities_by_label = byLabel(found);
  return result;
}

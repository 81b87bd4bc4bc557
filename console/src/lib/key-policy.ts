/**
 * A key's policy in the console's forms: the text each field holds, read from a key and
 * turned into the admin API's body. An empty field is "not set": left out when a key is
 * made, cleared (null) when one is edited, and an edit sends only the fields it changes.
 * The server checks every value and names the field it refuses.
 */
import { usd } from './format.js';
import type { ApiKey, BudgetWindow } from './types.js';

export const BUDGET_WINDOWS: readonly BudgetWindow[] = ['day', 'week', 'month', 'total'];

export interface PolicyForm {
  /** Model names and glob patterns, comma-separated. */
  models: string;
  budgetUsd: string;
  budgetWindow: BudgetWindow;
  rpm: string;
  tpm: string;
  /** A `datetime-local` value, read as UTC. */
  expiresAt: string;
  /** Comma-separated. */
  tags: string;
  /** One `name=value` a line. */
  metadata: string;
}

export const EMPTY_POLICY_FORM: PolicyForm = { models: '', budgetUsd: '', budgetWindow: 'day', rpm: '', tpm: '', expiresAt: '', tags: '', metadata: '' };

type PolicyBody = Record<'models' | 'budget' | 'rpm' | 'tpm' | 'expires_at' | 'metadata' | 'tags', unknown>;

const list = (text: string): string[] | null => {
  const items = text.split(',').map((item) => item.trim()).filter((item) => item !== '');
  return items.length === 0 ? null : items;
};

/** A number field as a number (the server refuses what is not a whole number in range); null when empty. */
const numberOrNull = (text: string): number | null => (text.trim() === '' ? null : Number(text));

function metadataOf(text: string): Record<string, string> | null {
  const entries = text.split('\n').filter((line) => line.trim() !== '');
  if (entries.length === 0) return null;
  const metadata: Record<string, string> = {};
  for (const [index, line] of entries.entries()) {
    const at = line.indexOf('=');
    if (at < 0) throw new Error(`metadata: line ${index + 1} must be name=value, got "${line.trim()}"`);
    metadata[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return metadata;
}

const expiresOf = (text: string): number | null => (text === '' ? null : Math.floor(Date.parse(`${text}:00Z`) / 1000));

/** Every policy field of the form, null where it is empty. */
function fullBody(form: PolicyForm): PolicyBody {
  const limit = numberOrNull(form.budgetUsd);
  return {
    models: list(form.models),
    budget: limit === null ? null : { limit_usd: limit, window: form.budgetWindow },
    rpm: numberOrNull(form.rpm),
    tpm: numberOrNull(form.tpm),
    expires_at: expiresOf(form.expiresAt),
    metadata: metadataOf(form.metadata),
    tags: list(form.tags),
  };
}

/** The policy fields of a new key: only those set. */
export function createBody(form: PolicyForm): Partial<PolicyBody> {
  return Object.fromEntries(Object.entries(fullBody(form)).filter(([, value]) => value !== null));
}

/** The policy fields an edit changes on `key` (null: cleared). */
export function editBody(form: PolicyForm, key: ApiKey): Partial<PolicyBody> {
  const current: PolicyBody = { models: key.models, budget: key.budget, rpm: key.rpm, tpm: key.tpm, expires_at: key.expires_at, metadata: key.metadata, tags: key.tags };
  const next = fullBody(form);
  return Object.fromEntries(Object.entries(next).filter(([field, value]) => JSON.stringify(value) !== JSON.stringify(current[field as keyof PolicyBody])));
}

/** The form showing the key's policy as it is. */
export function formOfKey(key: ApiKey): PolicyForm {
  return {
    models: key.models?.join(', ') ?? '',
    budgetUsd: key.budget ? String(key.budget.limit_usd) : '',
    budgetWindow: key.budget?.window ?? 'day',
    rpm: key.rpm === null ? '' : String(key.rpm),
    tpm: key.tpm === null ? '' : String(key.tpm),
    expiresAt: key.expires_at === null ? '' : new Date(key.expires_at * 1000).toISOString().slice(0, 16),
    tags: key.tags?.join(', ') ?? '',
    metadata: key.metadata ? Object.entries(key.metadata).map(([name, value]) => `${name}=${value}`).join('\n') : '',
  };
}

/** The key's policy as label and text, one per field it sets (none: every model, no limits). */
export function policySummary(key: ApiKey): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (key.models) rows.push(['Models', key.models.join(', ')]);
  if (key.budget) rows.push(['Budget', key.budget.window === 'total' ? `${usd(key.budget.limit_usd)} in total` : `${usd(key.budget.limit_usd)} a ${key.budget.window}`]);
  if (key.rpm !== null) rows.push(['Requests/min', String(key.rpm)]);
  if (key.tpm !== null) rows.push(['Tokens/min', String(key.tpm)]);
  if (key.expires_at !== null) rows.push(['Expires', `${new Date(key.expires_at * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`]);
  if (key.tags) rows.push(['Tags', key.tags.join(', ')]);
  if (key.metadata) rows.push(['Metadata', Object.entries(key.metadata).map(([name, value]) => `${name}=${value}`).join(', ')]);
  return rows;
}

/**
 * Reading a key's policy as the admin API and the CLI give it (snake_case, dollars, Unix
 * seconds; `null` clears a field) into the KeyPolicy the key carries, refusing anything
 * malformed with the field named; and applying such a change to a key's policy.
 */
import { invalidRequest } from '../shared/errors.js';
import { usdToMicros } from '../shared/money.js';
import type { BudgetWindow, KeyPolicy } from './key-policy.types.js';
import { firstOverlap, patternProblem } from './model-globs.js';

/** A policy as the admin API and the CLI take it; an absent field is left as it is, `null` clears it. */
export interface KeyPolicyInput {
  models?: unknown;
  budget?: unknown;
  rpm?: unknown;
  tpm?: unknown;
  expires_at?: unknown;
  metadata?: unknown;
  tags?: unknown;
}

/** A change of a key's policy: a field set, cleared (`null`), or left as it is (absent). */
export type KeyPolicyPatch = { -readonly [K in keyof KeyPolicy]?: KeyPolicy[K] | null };

export const BUDGET_WINDOWS: readonly BudgetWindow[] = ['day', 'week', 'month', 'total'];
export const MAX_MODEL_PATTERNS = 100;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 64;
export const MAX_METADATA_ENTRIES = 32;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;
const MAX_RPM = 1_000_000;
const MAX_TPM = 1_000_000_000;
/** A tag: letters, digits and `_ . : / -` (no commas or spaces: the tags header is a comma-separated list). */
const TAG = /^[A-Za-z0-9_.:/-]+$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function readModels(value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string')) throw invalidRequest('models must be an array of model names or glob patterns', 'models');
  if (value.length === 0) throw invalidRequest('models must name at least one model (omit it, or set it to null, for every model)', 'models');
  if (value.length > MAX_MODEL_PATTERNS) throw invalidRequest(`models may hold at most ${MAX_MODEL_PATTERNS} patterns`, 'models');
  const patterns = value as string[];
  for (const pattern of patterns) {
    const problem = patternProblem(pattern);
    if (problem) throw invalidRequest(`models: the pattern "${pattern}" ${problem}`, 'models');
  }
  const overlap = firstOverlap(patterns);
  if (overlap) {
    const [a, b] = overlap;
    const what = a.toLowerCase() === b.toLowerCase() ? `"${a}" is listed twice` : `"${a}" and "${b}" overlap (some model name matches both)`;
    throw invalidRequest(`models: ${what}; list each model once`, 'models');
  }
  return patterns;
}

function readBudget(value: unknown): KeyPolicy['budget'] {
  if (!isRecord(value)) throw invalidRequest('budget must be an object with limit_usd and window', 'budget');
  const { limit_usd: limitUsd, window } = value;
  const unknown = Object.keys(value).find((k) => k !== 'limit_usd' && k !== 'window');
  if (unknown !== undefined) throw invalidRequest(`budget has an unknown field "${unknown}": it takes limit_usd and window`, `budget.${unknown}`);
  if (typeof limitUsd !== 'number' || !Number.isFinite(limitUsd)) throw invalidRequest('budget.limit_usd must be a number of US dollars', 'budget.limit_usd');
  if (limitUsd < 0) throw invalidRequest(`budget.limit_usd must not be below zero, got ${limitUsd}`, 'budget.limit_usd');
  const limitMicros = usdToMicros(limitUsd);
  if (!Number.isSafeInteger(limitMicros)) throw invalidRequest('budget.limit_usd is out of range', 'budget.limit_usd');
  if (typeof window !== 'string' || !(BUDGET_WINDOWS as readonly string[]).includes(window)) {
    throw invalidRequest(`budget.window must be one of ${BUDGET_WINDOWS.join(', ')}, got ${JSON.stringify(window ?? null)}`, 'budget.window');
  }
  return { limitMicros, window: window as BudgetWindow };
}

function readRate(value: unknown, field: 'rpm' | 'tpm', max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalidRequest(`${field} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`, field);
  }
  return value;
}

function readExpiry(value: unknown, nowMs: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalidRequest('expires_at must be a Unix time in whole seconds', 'expires_at');
  const ms = value * 1000;
  if (ms <= nowMs) throw invalidRequest(`expires_at must be in the future, got ${value} (now is ${Math.floor(nowMs / 1000)})`, 'expires_at');
  return ms;
}

function readMetadata(value: unknown): Record<string, string> {
  if (!isRecord(value)) throw invalidRequest('metadata must be an object of string values', 'metadata');
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_ENTRIES) throw invalidRequest(`metadata may hold at most ${MAX_METADATA_ENTRIES} entries`, 'metadata');
  const metadata: Record<string, string> = {};
  for (const [key, entry] of entries) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY_LENGTH) throw invalidRequest(`metadata keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters`, 'metadata');
    if (typeof entry !== 'string') throw invalidRequest(`metadata.${key} must be a string`, `metadata.${key}`);
    if (entry.length > MAX_METADATA_VALUE_LENGTH) throw invalidRequest(`metadata.${key} must be at most ${MAX_METADATA_VALUE_LENGTH} characters`, `metadata.${key}`);
    Object.defineProperty(metadata, key, { value: entry, enumerable: true, writable: true, configurable: true });
  }
  return metadata;
}

function readTags(value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.some((t) => typeof t !== 'string')) throw invalidRequest('tags must be an array of strings', 'tags');
  if (value.length > MAX_TAGS) throw invalidRequest(`tags may hold at most ${MAX_TAGS} tags`, 'tags');
  const tags = value as string[];
  for (const tag of tags) {
    if (tag.length === 0 || tag.length > MAX_TAG_LENGTH || !TAG.test(tag)) {
      throw invalidRequest(`tags: "${tag}" must be 1 to ${MAX_TAG_LENGTH} letters, digits or _ . : / -`, 'tags');
    }
  }
  const repeated = tags.find((tag, i) => tags.indexOf(tag) !== i);
  if (repeated !== undefined) throw invalidRequest(`tags: "${repeated}" is listed twice`, 'tags');
  return tags;
}

/** Reads one field: absent stays absent, null clears, anything else is read by `read`. */
function field<T>(value: unknown, read: (value: unknown) => T): T | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  return read(value);
}

/** The change `input` asks for, every field checked; throws 400 naming the first bad field. */
export function readKeyPolicyPatch(input: KeyPolicyInput, nowMs: number): KeyPolicyPatch {
  const patch: KeyPolicyPatch = {
    models: field(input.models, readModels),
    budget: field(input.budget, readBudget),
    rpm: field(input.rpm, (v) => readRate(v, 'rpm', MAX_RPM)),
    tpm: field(input.tpm, (v) => readRate(v, 'tpm', MAX_TPM)),
    expiresAtMs: field(input.expires_at, (v) => readExpiry(v, nowMs)),
    metadata: field(input.metadata, readMetadata),
    tags: field(input.tags, readTags),
  };
  for (const key of Object.keys(patch) as Array<keyof KeyPolicyPatch>) if (patch[key] === undefined) delete patch[key];
  return patch;
}

/** `policy` with `patch` applied: set fields replace, null fields are removed. */
export function applyKeyPolicyPatch(policy: KeyPolicy, patch: KeyPolicyPatch): KeyPolicy {
  const next: Record<string, unknown> = { ...policy };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as KeyPolicy;
}

/** True when the policy sets anything at all. */
export const hasPolicy = (policy: KeyPolicy): boolean => Object.keys(policy).length > 0;

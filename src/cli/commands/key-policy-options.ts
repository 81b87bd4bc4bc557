/**
 * The CLI's flags for a key's policy (`sluice keys create|update`), read into the same
 * input the admin API takes, so both are checked by the one reader in the domain.
 */
import type { Command } from 'commander';
import type { KeyPolicyInput } from '../../domain/identity/key-policy.js';
import { invalidRequest } from '../../domain/shared/errors.js';

export interface KeyPolicyFlags {
  models?: string;
  budgetUsd?: string;
  budgetWindow?: string;
  rpm?: string;
  tpm?: string;
  expiresAt?: string;
  metadata?: string[];
  tags?: string;
  clear?: string;
}

const POLICY_FIELDS = ['models', 'budget', 'rpm', 'tpm', 'expires_at', 'metadata', 'tags'] as const;

/** A number when the text is one; else the text, for the reader to refuse by name. */
const numberOr = (text: string): number | string => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);
const list = (text: string): string[] => text.split(',').map((item) => item.trim()).filter((item) => item !== '');

export function withPolicyFlags(command: Command, clearable: boolean): Command {
  command
    .option('--models <patterns>', 'comma-separated model names and globs (* and ?) the key may reach, aliases included')
    .option('--budget-usd <dollars>', 'spending limit per budget window (with --budget-window)')
    .option('--budget-window <window>', 'day, week, month (UTC calendar) or total')
    .option('--rpm <n>', 'requests per minute for this key')
    .option('--tpm <n>', 'tokens per minute for this key')
    .option('--expires-at <unix-seconds>', 'when the key stops working')
    .option('--metadata <key=value>', 'a label for the key (repeatable)', (value: string, all: string[] = []) => [...all, value])
    .option('--tags <tags>', 'comma-separated tags recorded on every call the key makes');
  if (clearable) command.option('--clear <fields>', `comma-separated fields to remove: ${POLICY_FIELDS.join(', ')}`);
  return command;
}

function metadataOf(pairs: readonly string[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw invalidRequest(`--metadata takes key=value, got "${pair}"`, 'metadata');
    metadata[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return metadata;
}

/** The policy input the flags give: set fields, and those --clear names as null. */
export function policyInputOf(flags: KeyPolicyFlags): KeyPolicyInput {
  const input: Record<string, unknown> = {};
  if (flags.models !== undefined) input.models = list(flags.models);
  if (flags.budgetUsd !== undefined || flags.budgetWindow !== undefined) {
    input.budget = { limit_usd: flags.budgetUsd === undefined ? undefined : numberOr(flags.budgetUsd), window: flags.budgetWindow };
  }
  if (flags.rpm !== undefined) input.rpm = numberOr(flags.rpm);
  if (flags.tpm !== undefined) input.tpm = numberOr(flags.tpm);
  if (flags.expiresAt !== undefined) input.expires_at = numberOr(flags.expiresAt);
  if (flags.metadata !== undefined) input.metadata = metadataOf(flags.metadata);
  if (flags.tags !== undefined) input.tags = list(flags.tags);
  for (const field of flags.clear === undefined ? [] : list(flags.clear)) {
    if (!(POLICY_FIELDS as readonly string[]).includes(field)) throw invalidRequest(`--clear takes ${POLICY_FIELDS.join(', ')}; got "${field}"`, 'clear');
    if (field in input) throw invalidRequest(`--clear ${field} cannot be given with a value for it`, field);
    input[field] = null;
  }
  return input;
}

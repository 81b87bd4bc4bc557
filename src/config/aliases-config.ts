/**
 * Model aliases: other names a request may give a model. Two kinds, both resolved
 * wherever a model name is (every wire, batches, MCP):
 *
 *   models:
 *     big-coder: { base_url: …, aliases: [claude-sonnet-4-6] }   # exact names
 *   aliases:                                                     # exact names or glob patterns
 *     claude-*haiku*: small-coder
 *     claude-*: big-coder
 *
 * A name resolves to a model id first, then to an exact alias (`models.<id>.aliases` or a
 * key of `aliases` without `*`/`?`), then to the first glob of `aliases` that matches, in
 * file order. Matching is case-insensitive, as ids are. Refused at start-up, naming the
 * key: an exact alias that is a model id or another alias, and an alias of a model that
 * does not exist.
 */
import { Type } from '@sinclair/typebox';
import { configSection } from './section.js';
import type { ModelConfig } from './schema.js';
import { modelIdProblem } from './models-config.js';
import { isGlob } from '../domain/shared/glob.js';

export interface AliasEntry {
  /** The name or pattern as written in sluice.yaml. */
  pattern: string;
  /** The id of the model it names. */
  model: string;
  /** True when the pattern has `*` or `?`. */
  glob: boolean;
}

export interface AliasesConfig {
  /** Exact aliases (`models.<id>.aliases`, then the exact keys of `aliases`), then the globs in file order. */
  entries: readonly AliasEntry[];
}

const GLOB_PATTERN = /^[A-Za-z0-9*?][A-Za-z0-9._:*?-]*$/;


/** Why `pattern` cannot be an alias key, or null when it can. */
function patternProblem(pattern: string): string | null {
  if (!isGlob(pattern)) return modelIdProblem(pattern);
  if (pattern.length > 128 || !GLOB_PATTERN.test(pattern)) return 'a glob alias has only letters, digits, ".", "_", "-", ":", "*" and "?"';
  return null;
}

/** Each model's `aliases:` list, then the exact keys of the top-level map, checked against the ids and each other. */
function exactEntries(models: readonly ModelConfig[], top: ReadonlyMap<string, string>, byLowerId: ReadonlyMap<string, ModelConfig>, problems: string[]): AliasEntry[] {
  const taken = new Map<string, string>();
  const entries: AliasEntry[] = [];
  const add = (key: string, alias: string, model: string) => {
    const idProblem = modelIdProblem(alias);
    if (idProblem) return void problems.push(`${key}: ${idProblem}`);
    const lower = alias.toLowerCase();
    const clash = byLowerId.get(lower) ?? models.find((m) => m.entry.responseModel?.toLowerCase() === lower);
    if (clash) return void problems.push(`${key}: ${alias} is already the name of the model ${clash.id}; an alias must be a name of its own`);
    const earlier = taken.get(lower);
    if (earlier !== undefined) return void problems.push(`${key}: ${alias} is already an alias (${earlier})`);
    taken.set(lower, key);
    entries.push({ pattern: alias, model, glob: false });
  };
  for (const model of models) model.aliases.forEach((alias, i) => add(`models.${model.id}.aliases[${i}]`, alias, model.id));
  for (const [pattern, target] of top) if (!isGlob(pattern)) add(`aliases.${pattern}`, pattern, byLowerId.get(target.toLowerCase())!.id);
  return entries;
}

export const aliasesSection = configSection({
  key: 'aliases',
  schema: Type.Record(Type.String(), Type.String({ minLength: 1 }), {
    description: 'other names for models: an exact name or a glob (`*`, `?`) → a model id; globs are tried in file order after ids and exact names',
  }),
  resolve: ({ file, core, problems }): AliasesConfig => {
    const models = Object.values(core.models);
    const byLowerId = new Map(models.map((m) => [m.id.toLowerCase(), m]));
    // Only through a Map: a key named like an Object.prototype member must never find the member.
    const top = new Map<string, string>();
    for (const [pattern, target] of Object.entries(file ?? {})) {
      const problem = patternProblem(pattern);
      if (problem) problems.push(`aliases.${JSON.stringify(pattern)}: ${problem}`);
      else if (!byLowerId.has(target.toLowerCase())) problems.push(`aliases.${pattern}: ${target} is not a model (an alias names a model id)`);
      else top.set(pattern, target);
    }
    const globs = [...top].filter(([pattern]) => isGlob(pattern)).map(([pattern, target]) => ({ pattern, model: byLowerId.get(target.toLowerCase())!.id, glob: true }));
    return { entries: [...exactEntries(models, top, byLowerId, problems), ...globs] };
  },
});

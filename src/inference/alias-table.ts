/**
 * The registry's aliases, built once from the config: exact names in a Map, globs as
 * anchored regular expressions tried in order. Names arrive lower-cased; globs match
 * case-insensitively (`*` any run of characters, `?` one character).
 */
import type { ModelAlias } from '../domain/models/model-resolver.port.js';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import { globRegExp } from '../domain/shared/glob.js';

export interface AliasSource {
  pattern: string;
  model: string;
  glob: boolean;
}


const MAX_GLOB_NAME = 128;

export class AliasTable {
  readonly list: readonly ModelAlias[];
  readonly #exact = new Map<string, ModelSpec>();
  readonly #globs: { regex: RegExp; model: ModelSpec }[] = [];

  constructor(entries: readonly AliasSource[], modelOf: (id: string) => ModelSpec) {
    this.list = entries.map((e) => ({ pattern: e.pattern, model: modelOf(e.model), glob: e.glob }));
    for (const alias of this.list) {
      if (alias.glob) this.#globs.push({ regex: globRegExp(alias.pattern), model: alias.model });
      else this.#exact.set(alias.pattern.toLowerCase(), alias.model);
    }
  }

  /** The model a lower-cased name is an alias of, or undefined. */
  find(lower: string): ModelSpec | undefined {
    const exact = this.#exact.get(lower);
    // Request names beyond an id's length never match a glob (nor cost a long regex run).
    if (exact || lower.length > MAX_GLOB_NAME) return exact;
    for (const glob of this.#globs) if (glob.regex.test(lower)) return glob.model;
    return undefined;
  }
}

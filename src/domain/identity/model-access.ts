/**
 * Which models a caller may reach: every model, unless its key's policy lists some. A
 * call is allowed when the model it resolves to matches the list and, when it was asked
 * for by an alias, the alias matches too: an alias may be listed, but never carries a key
 * to a model outside its list. Anything else answers as a model that does not exist.
 */
import { notFound } from '../shared/errors.js';
import type { KeyPolicy } from './key-policy.types.js';
import { modelMatcher } from './model-globs.js';

/** The wire's own "no such model": 404 `model_not_found` (Anthropic's 404 not_found_error on /v1/messages). */
export const modelNotAccessible = (name: string) =>
  notFound(`The model \`${name}\` does not exist or you do not have access to it.`, 'model_not_found', 'model');

const matchers = new WeakMap<readonly string[], (name: string) => boolean>();

/** The test for a model list, compiled once per list (a key's policy object lives as long as its cached lookup). */
function matcherOf(models: readonly string[]): (name: string) => boolean {
  let matcher = matchers.get(models);
  if (!matcher) matchers.set(models, (matcher = modelMatcher(models)));
  return matcher;
}

/** True when the policy lets the caller reach `modelId` (asked for as `askedAs`, when by an alias). */
export function modelAllowed(policy: KeyPolicy | undefined, modelId: string, askedAs?: string | null): boolean {
  const models = policy?.models;
  if (models === undefined) return true;
  const allowed = matcherOf(models);
  return allowed(modelId) && (askedAs === undefined || askedAs === null || allowed(askedAs));
}

/** Throws the wire's "model not found" (naming the name asked) unless the policy allows the model. */
export function requireModelAllowed(policy: KeyPolicy | undefined, modelId: string, askedAs?: string | null): void {
  if (!modelAllowed(policy, modelId, askedAs)) throw modelNotAccessible(askedAs ?? modelId);
}

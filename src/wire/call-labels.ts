/**
 * A call's labels, from every source: the `x-sluice-tags` header (routes and sockets),
 * the body's own (its wire's `labels`), and the key's default tags (its policy). Every
 * scope and the batch runner label a call here, so its usage record and request log
 * name the same tags and end user whichever way the call came.
 */
import { endUserIn, mergedTags, tagsIn, TAGS_HEADER, type CallLabels } from '../domain/billing/call-tags.js';
import type { KeyPolicy } from '../domain/identity/key-policy.types.js';
import type { BodyLabels, WireFormat } from './wire-format.js';

/** The tags a `x-sluice-tags` header names (absent: none); a bad value is a 400 naming the header. */
export const headerTags = (value: string | string[] | undefined): string[] => tagsIn(Array.isArray(value) ? value.join(',') : value, TAGS_HEADER);

/** The call's tags and end user: the header's tags, the body's, and the key's defaults, merged. */
export function callLabelsOf(format: Pick<WireFormat, 'labels'>, body: unknown, fromHeader: readonly string[], policy: KeyPolicy | undefined): CallLabels {
  const own = format.labels?.(body) ?? {};
  const tags = mergedTags(fromHeader, own.tags ?? [], policy?.tags, fromHeader.length > 0 ? `${TAGS_HEADER} and metadata.tags` : 'metadata.tags');
  const labels: CallLabels = {};
  if (tags) labels.tags = tags;
  if (own.endUser !== undefined) labels.endUser = own.endUser;
  return labels;
}

const fieldOf = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;

/**
 * What an OpenAI body names: tags at `metadata.tags` (a comma-separated string, as
 * OpenAI's metadata values are strings, or an array), and the end user as
 * `safety_identifier` or, the older name, `user`.
 */
export function openAiLabels(body: object): BodyLabels {
  const labels: BodyLabels = { tags: tagsIn(fieldOf(fieldOf(body, 'metadata'), 'tags'), 'metadata.tags') };
  const endUser = endUserIn(fieldOf(body, 'safety_identifier'), 'safety_identifier') ?? endUserIn(fieldOf(body, 'user'), 'user');
  if (endUser !== undefined) labels.endUser = endUser;
  return labels;
}

/** What an Anthropic body names: the end user at `metadata.user_id` (its metadata has no other field). */
export function anthropicLabels(body: object): BodyLabels {
  const endUser = endUserIn(fieldOf(fieldOf(body, 'metadata'), 'user_id'), 'metadata.user_id');
  return endUser === undefined ? {} : { endUser };
}

/**
 * A call's tags and end user, as its usage record keeps them. Tags come from the
 * `x-sluice-tags` header, the body's `metadata.tags` and the key's default tags; they are
 * merged in that order, duplicates dropped. A tag is 1–64 letters, digits, `.`, `_`, `:`,
 * `/`, `=` or `-` (no comma: the header separates tags with commas); a call names at most
 * 16 of its own. The end user is the client's own name for its user (OpenAI's `user` or
 * `safety_identifier`, Anthropic's `metadata.user_id`), at most 512 characters.
 */
import { invalidRequest } from '../shared/errors.js';
import type { MeteredCall } from './meter.js';
import type { UsageRecord } from './usage.types.js';

export const TAGS_HEADER = 'x-sluice-tags';
export const MAX_CALL_TAGS = 16;
export const MAX_TAG_LENGTH = 64;
export const MAX_END_USER_LENGTH = 512;

const TAG = /^[A-Za-z0-9._:/=-]+$/;

/** A call's labels, as its usage record keeps them. */
export interface CallLabels {
  tags?: readonly string[];
  endUser?: string;
}

function checkedTag(tag: string, param: string): string {
  if (tag.length === 0) throw invalidRequest(`${param} has an empty tag`, param);
  if (tag.length > MAX_TAG_LENGTH) throw invalidRequest(`${param}: a tag must be at most ${MAX_TAG_LENGTH} characters`, param);
  if (!TAG.test(tag)) throw invalidRequest(`${param}: a tag may hold only letters, digits and . _ : / = - (got ${JSON.stringify(tag)})`, param);
  return tag;
}

/**
 * The tags `raw` names: a comma-separated string (the header, or an OpenAI `metadata`
 * value, which is a string) or an array of strings. Absent: none. Refused with a 400
 * naming `param`.
 */
export function tagsIn(raw: unknown, param: string): string[] {
  if (raw === undefined || raw === null) return [];
  let listed: unknown[];
  if (typeof raw === 'string') listed = raw.split(',').map((t) => t.trim());
  else if (Array.isArray(raw)) listed = raw;
  else throw invalidRequest(`${param} must be a comma-separated string or an array of strings`, param);
  const tags = listed.map((tag) => {
    if (typeof tag !== 'string') throw invalidRequest(`${param} must be a comma-separated string or an array of strings`, param);
    return checkedTag(tag, param);
  });
  if (tags.length > MAX_CALL_TAGS) throw invalidRequest(`${param} names ${tags.length} tags; at most ${MAX_CALL_TAGS}`, param);
  return tags;
}

/**
 * The call's own tags (header, then body) and the key's defaults, deduplicated in that
 * order; undefined when there are none. The call's own may number at most MAX_CALL_TAGS
 * together (`param` names them in the refusal); the key's were checked when it was set.
 */
export function mergedTags(headerTags: readonly string[], bodyTags: readonly string[], keyTags: readonly string[] | undefined, param: string): readonly string[] | undefined {
  const merged = new Set([...headerTags, ...bodyTags]);
  if (merged.size > MAX_CALL_TAGS) throw invalidRequest(`${param} name ${merged.size} tags together; at most ${MAX_CALL_TAGS}`, param);
  for (const tag of keyTags ?? []) merged.add(tag);
  return merged.size === 0 ? undefined : [...merged];
}

/** The end user a body names at `param`, checked; undefined when it names none (absent, null or empty). */
export function endUserIn(raw: unknown, param: string): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw invalidRequest(`${param} must be a string`, param);
  if (raw.length > MAX_END_USER_LENGTH) throw invalidRequest(`${param} must be at most ${MAX_END_USER_LENGTH} characters`, param);
  return raw;
}

/** Names on `record` the agent session, tags and end user its call carried. */
export function labelRecord(record: UsageRecord, call: Pick<MeteredCall, 'sessionId' | 'tags' | 'endUser'>): void {
  if (call.sessionId !== undefined) record.sessionId = call.sessionId;
  if (call.tags !== undefined) record.tags = call.tags;
  if (call.endUser !== undefined) record.endUser = call.endUser;
}

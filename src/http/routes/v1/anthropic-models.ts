/**
 * GET /v1/models and /v1/models/{id} in Anthropic's shape (Models API): what an Anthropic
 * client (`@anthropic-ai/sdk`, Claude Code's model picker) reads. Which shape a request
 * gets: Anthropic's when it sends an `anthropic-version` header (every Anthropic SDK does,
 * Claude Code included); OpenAI's otherwise, byte for byte as before. `x-api-key` alone
 * says nothing: it is Sluice's own API-key header, which OpenAI-shaped clients send too.
 *
 * The list holds the models that serve chat (the Messages API's), each alias of one (Claude
 * Code's picker keeps only ids with `claude` or `anthropic` in them, so aliases are how local
 * models appear there), and, for each glob alias, Claude Code's default model names it
 * matches. Pages follow Anthropic's cursors: `limit` (1–1000, default 20), `after_id`,
 * `before_id`; `first_id`/`last_id` name the page's ends and `has_more` says whether more
 * lie in the direction asked.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModelDirectory } from '../../../domain/models/model-resolver.port.js';
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import { globRegExp } from '../../../domain/shared/glob.js';

/** Models have no release date of their own; a fixed one keeps answers stable. */
const CREATED_AT = '2026-01-01T00:00:00Z';
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/**
 * Claude Code's own model names (its tiers' defaults, 2.1.x): listed under a glob alias that
 * matches them, so its picker offers them without the operator spelling each one out.
 */
export const CLAUDE_CODE_MODEL_NAMES = [
  'claude-opus-5-5',
  'claude-sonnet-5-5',
  'claude-haiku-5-5',
  'claude-opus-5',
  'claude-sonnet-5',
  'claude-opus-4-8',
  'claude-opus-4-7',
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-sonnet-4-5',
  'claude-haiku-4-5',
] as const;

/** Whether `request` asked in Anthropic's dialect (see the file header for the rule). */
export function wantsAnthropicShape(request: FastifyRequest): boolean {
  return request.headers['anthropic-version'] !== undefined;
}

export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  max_input_tokens: number;
}

export function anthropicModelInfo(name: string, model: ModelSpec): AnthropicModelInfo {
  const displayName = name.toLowerCase() === model.id.toLowerCase() ? model.id : `${name} (served by ${model.id})`;
  return { type: 'model', id: name, display_name: displayName, created_at: CREATED_AT, max_input_tokens: model.contextLength };
}

/** Every entry of the Anthropic-shape list, in order, each name once. */
export function anthropicModelEntries(registry: ModelDirectory): AnthropicModelInfo[] {
  const entries = new Map<string, AnthropicModelInfo>();
  const add = (name: string, model: ModelSpec) => {
    if (model.entry.routes.includes('chat') && !entries.has(name.toLowerCase())) entries.set(name.toLowerCase(), anthropicModelInfo(name, model));
  };
  const aliases = registry.aliases();
  for (const alias of aliases) if (!alias.glob) add(alias.pattern, alias.model);
  for (const alias of aliases) {
    if (!alias.glob) continue;
    const regex = globRegExp(alias.pattern);
    // The name is listed under the model it resolves to (an earlier glob or an exact alias wins).
    for (const name of CLAUDE_CODE_MODEL_NAMES) if (regex.test(name) && registry.find(name) === alias.model) add(name, alias.model);
  }
  for (const model of registry.list()) add(model.id, model);
  return [...entries.values()];
}

/** Anthropic's error envelope, for the refusals of these two routes. */
export function anthropicError(reply: FastifyReply, status: 400 | 404, message: string): FastifyReply {
  const type = status === 404 ? 'not_found_error' : 'invalid_request_error';
  return reply.code(status).send({ type: 'error', error: { type, message }, request_id: reply.request.id });
}

type PageQuery = Record<string, string | string[] | undefined>;

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[value.length - 1] : value);

export type PageOrRefusal = { page: Record<string, unknown>; refused?: undefined } | { refused: string };

/** One page of `entries` as `query` asks, or the message of a 400. */
export function anthropicPage(entries: readonly AnthropicModelInfo[], query: PageQuery): PageOrRefusal {
  const limitText = single(query.limit);
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return { refused: `limit: must be an integer from 1 to ${MAX_LIMIT}` };
  const afterId = single(query.after_id);
  const beforeId = single(query.before_id);
  if (afterId !== undefined && beforeId !== undefined) return { refused: 'after_id and before_id: give at most one' };
  const cursor = afterId ?? beforeId;
  let start = 0;
  let end = entries.length;
  if (cursor !== undefined) {
    const at = entries.findIndex((e) => e.id.toLowerCase() === cursor.toLowerCase());
    if (at < 0) return { refused: `${afterId !== undefined ? 'after_id' : 'before_id'}: no model with id ${cursor}` };
    if (afterId !== undefined) start = at + 1;
    else end = at;
  }
  // Forwards from after_id (or the start); backwards from before_id: the page just before it.
  const data = beforeId !== undefined ? entries.slice(Math.max(start, end - limit), end) : entries.slice(start, Math.min(end, start + limit));
  const hasMore = beforeId !== undefined ? end - data.length > 0 : start + data.length < entries.length;
  return { page: { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null } };
}

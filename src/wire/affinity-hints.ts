/**
 * What a request says about its session, for the router's session affinity: the body's
 * `prompt_cache_key` and `user`, and the coding agent's session id (Claude Code's
 * `X-Claude-Code-Session-Id`, read by the route into the call's context:
 * src/http/agent-session.ts). Nothing is allocated for a request that says nothing.
 */
import type { AffinityHints } from '../domain/models/inference-backend.port.js';

/** Longest hint kept: a key is hashed, and a longer one says nothing more about the session. */
const MAX_HINT_CHARS = 512;

const hint = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? (value.length > MAX_HINT_CHARS ? value.slice(0, MAX_HINT_CHARS) : value) : undefined;

/** The hints of a body (its `prompt_cache_key` and `user`) and of the session header; undefined when there are none. */
export function affinityOf(body: Readonly<Record<string, unknown>>, session: string | undefined): AffinityHints | undefined {
  const promptCacheKey = hint(body.prompt_cache_key);
  const user = hint(body.user);
  const sessionId = hint(session);
  if (promptCacheKey === undefined && user === undefined && sessionId === undefined) return undefined;
  const hints: AffinityHints = {};
  if (promptCacheKey !== undefined) hints.promptCacheKey = promptCacheKey;
  if (user !== undefined) hints.user = user;
  if (sessionId !== undefined) hints.session = sessionId;
  return hints;
}

/**
 * The endpoints a batch line can run on. Each is its synchronous route's own service
 * behind that route's own validator: a line is checked by the same compiled schema and
 * run by the same service as the call it stands for. The composition registers them by
 * url (the core's inference routes; the decision feature's `/v1/systemone`), and the
 * runner picks one by its batch's endpoint.
 */
import type { CallStory } from '../request-log/call-story.js';
import type { Caller } from '../identity/caller.js';
import type { UsageRecord } from '../billing/usage.types.js';
import type { BatchUsage } from './batch.types.js';

export interface LineCallContext {
  requestId: string;
  signal: AbortSignal;
  /** The usage records' route (`batch`). */
  route: string;
  /** The line's story for the request log: the meter and the router tell it what they did. */
  story?: CallStory;
}

/** A line's answer: the route's, and its JSON text when the route writes that by hand (the decision route's key order). */
export interface LineAnswer {
  body: object;
  json?: string;
}

/** One line's call with its checked body, run once per attempt; resolves with the route's answer. */
export type LineCall = (caller: Caller, context: LineCallContext) => Promise<LineAnswer>;

export interface BatchEndpoint {
  /**
   * Checks a line's body as the route does (throwing the 400 the route would answer) and
   * returns its call. `lineText` is the line as uploaded, the body at its `body` key, for
   * what parsing loses (the order of integer-like keys).
   */
  prepare(body: unknown, lineText: string): LineCall;
  /** Whether any model here serves the endpoint (asked when a batch is created); absent: always. */
  served?(): boolean;
}

export type BatchEndpoints = ReadonlyMap<string, BatchEndpoint>;

type Json = Record<string, unknown>;

const objectOf = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

const count = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined);

/**
 * What a line used: its answer's `usage`, read in any of OpenAI's shapes (chat and
 * completions' prompt/completion tokens, responses' and decisions' input/output tokens,
 * embeddings' prompt tokens), or, for an answer without one (moderations), the tokens
 * its meter recorded.
 */
export function lineUsageOf(answer: unknown, records: readonly UsageRecord[]): BatchUsage {
  const usage = objectOf(objectOf(answer)?.usage);
  if (!usage) {
    return {
      inputTokens: records.reduce((sum, r) => sum + r.inputTokens, 0),
      cachedTokens: records.reduce((sum, r) => sum + (r.cachedInputTokens ?? 0), 0),
      outputTokens: records.reduce((sum, r) => sum + r.outputTokens, 0),
      reasoningTokens: 0,
    };
  }
  const inputDetails = objectOf(usage.input_tokens_details) ?? objectOf(usage.prompt_tokens_details);
  const outputDetails = objectOf(usage.output_tokens_details) ?? objectOf(usage.completion_tokens_details);
  return {
    inputTokens: count(usage.input_tokens) ?? count(usage.prompt_tokens) ?? 0,
    cachedTokens: count(inputDetails?.cached_tokens) ?? 0,
    outputTokens: count(usage.output_tokens) ?? count(usage.completion_tokens) ?? 0,
    reasoningTokens: count(outputDetails?.reasoning_tokens) ?? 0,
  };
}

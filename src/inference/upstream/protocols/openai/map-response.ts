/**
 * OpenAI wire responses → port outputs. Upstreams differ in small ways (reasoning in
 * `reasoning_content` for vLLM/SGLang/DeepSeek, `reasoning` for others; usage may be
 * absent), so everything is read defensively and a missing usage is reported as null
 * for the backend to count.
 */
import type { CarriedAnswer, ChatStreamEvent, ModerationResult, OutputTokenLogprobs, TokenLogprob, TokenUsage } from '../../../../domain/models/inference-backend.port.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Usage in the wire shape → port usage; null when the upstream reported none. */
export function readUsage(raw: unknown): TokenUsage | null {
  const usage = obj(raw);
  if (!usage) return null;
  const input = num(usage.prompt_tokens) ?? num(usage.input_tokens);
  const output = num(usage.completion_tokens) ?? num(usage.output_tokens) ?? 0;
  if (input === undefined) return null;
  const details = obj(usage.completion_tokens_details) ?? obj(usage.output_tokens_details);
  const reasoning = num(details?.reasoning_tokens);
  const read: TokenUsage = reasoning === undefined ? { inputTokens: input, outputTokens: output } : { inputTokens: input, outputTokens: output, reasoningTokens: reasoning };
  // Prompt-cache hits, of the input tokens (vLLM, SGLang and OpenAI report them; chat's name, then the Responses API's).
  const cached = num(obj(usage.prompt_tokens_details)?.cached_tokens) ?? num(obj(usage.input_tokens_details)?.cached_tokens);
  if (cached !== undefined && cached > 0) read.cachedTokens = Math.min(Math.floor(cached), input);
  return read;
}

const reasoningOf = (message: Json | null): string | null => text(message?.reasoning_content) ?? text(message?.reasoning);

export interface UpstreamChat {
  content: string;
  reasoning: string | null;
  finishReason: string;
  usage: TokenUsage | null;
  /** `choices[0].logprobs.content`, when the request asked for logprobs and the upstream sent them. */
  logprobs: OutputTokenLogprobs[] | null;
  carried: CarriedAnswer;
}

/** Top-level fields of an answer that are Sluice's own, whatever the engine put there. */
const OWNED = new Set(['id', 'object', 'created', 'model', 'usage', 'choices']);

/** The answer's choices (objects only) and its other top-level fields, as sent. */
function carriedOf(body: Json): CarriedAnswer {
  const choices = Array.isArray(body.choices) ? body.choices.filter((c): c is Json => obj(c) !== null) : [];
  const fields: Json = {};
  for (const key of Object.keys(body)) if (!OWNED.has(key) && key !== '__proto__') fields[key] = body[key];
  return { choices, fields };
}

function readTokenLogprob(raw: unknown): TokenLogprob | null {
  const entry = obj(raw);
  const token = text(entry?.token);
  const logprob = num(entry?.logprob);
  // -9999 is how OpenAI and vLLM spell "effectively zero"; a number is all that is needed.
  return token === null || logprob === undefined ? null : { token, logprob };
}

/** `logprobs: {content: [{token, logprob, top_logprobs: [{token, logprob}]}]}` (OpenAI, vLLM, SGLang, llama.cpp server). */
export function readLogprobs(raw: unknown): OutputTokenLogprobs[] | null {
  const content = obj(raw)?.content;
  if (!Array.isArray(content)) return null;
  const out: OutputTokenLogprobs[] = [];
  for (const item of content) {
    const chosen = readTokenLogprob(item);
    if (!chosen) return null;
    const top = obj(item)?.top_logprobs;
    const alternatives = Array.isArray(top) ? top.map(readTokenLogprob).filter((t): t is TokenLogprob => t !== null) : [];
    out.push({ ...chosen, top: alternatives });
  }
  return out;
}

export function readChatCompletion(raw: unknown): UpstreamChat | null {
  const body = obj(raw);
  const choice = obj((body?.choices as unknown[] | undefined)?.[0]);
  if (!body || !choice) return null;
  const message = obj(choice.message);
  const reasoning = reasoningOf(message);
  return {
    content: text(message?.content) ?? '',
    reasoning: reasoning === '' ? null : reasoning,
    finishReason: text(choice.finish_reason) ?? 'stop',
    usage: readUsage(body.usage),
    logprobs: readLogprobs(choice.logprobs),
    carried: carriedOf(body),
  };
}

/** The text a stream chunk produced (content and reasoning of every choice, or a completion's text), for counting. */
function producedText(choices: readonly Json[]): string {
  let produced = '';
  for (const choice of choices) {
    const delta = obj(choice.delta);
    produced += (text(delta?.content) ?? '') + (reasoningOf(delta) ?? '') + (text(choice.text) ?? '');
  }
  return produced;
}

/** A legacy completion's answer: its choices and fields as sent, its usage, and its text for counting. */
export function readCompletion(raw: unknown): { carried: CarriedAnswer; usage: TokenUsage | null; text: string } | null {
  const body = obj(raw);
  if (!body || !Array.isArray(body.choices) || body.choices.length === 0) return null;
  const carried = carriedOf(body);
  return { carried, usage: readUsage(body.usage), text: producedText(carried.choices) };
}

/** Whether a chunk ends a choice (any choice: with `n`, each ends in its own chunk). */
export const finishesAChoice = (event: Extract<ChatStreamEvent, { type: 'chunk' }>): boolean =>
  event.carried.choices.some((c) => typeof c.finish_reason === 'string');

/** One parsed SSE `data:` chunk → the port's stream events: the chunk as sent (when it has choices), then its usage. */
export function readStreamChunk(chunk: Json): ChatStreamEvent[] {
  const events: ChatStreamEvent[] = [];
  const carried = carriedOf(chunk);
  if (carried.choices.length > 0) events.push({ type: 'chunk', carried, text: producedText(carried.choices) });
  const usage = readUsage(chunk.usage);
  if (usage) events.push({ type: 'usage', usage });
  return events;
}

export function readEmbeddings(body: unknown, expected: number): { vectors: number[][]; usage: TokenUsage | null } | null {
  const data = obj(body)?.data;
  if (!Array.isArray(data) || data.length !== expected) return null;
  const vectors: number[][] = new Array(expected);
  for (const item of data) {
    const entry = obj(item);
    const index = num(entry?.index);
    if (index === undefined || index < 0 || index >= expected || !Array.isArray(entry?.embedding)) return null;
    vectors[index] = entry.embedding as number[];
  }
  if (vectors.some((v) => v === undefined)) return null;
  return { vectors, usage: readUsage(obj(body)?.usage) };
}

export function readModerations(body: unknown, expected: number): ModerationResult[] | null {
  const results = obj(body)?.results;
  if (!Array.isArray(results) || results.length !== expected) return null;
  const out: ModerationResult[] = [];
  for (const item of results) {
    const result = obj(item);
    const scores = obj(result?.category_scores);
    const flags = obj(result?.categories);
    if (!result || !scores) return null;
    // The upstream's keys: null prototype, so none of them can reach Object's members.
    const categoryScores = Object.create(null) as Record<string, number>;
    const categories = Object.create(null) as Record<string, boolean>;
    for (const [name, value] of Object.entries(scores)) if (typeof value === 'number') categoryScores[name] = value;
    for (const [name, value] of Object.entries(flags ?? {})) if (typeof value === 'boolean') categories[name] = value;
    const unsafe = num(result.unsafe_score);
    out.push({
      categoryScores,
      categories,
      flagged: result.flagged === true,
      ...(unsafe === undefined ? {} : { unsafeScore: unsafe }),
    });
  }
  return out;
}

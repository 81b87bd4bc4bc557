/**
 * OpenAI wire responses → port outputs. Upstreams differ in small ways (reasoning in
 * `reasoning_content` for vLLM/SGLang/DeepSeek, `reasoning` for others; usage may be
 * absent), so everything is read defensively and a missing usage is reported as null
 * for the backend to count.
 */
import type { ChatStreamEvent, ModerationResult, OutputTokenLogprobs, TokenLogprob, TokenUsage } from '../../../domain/models/inference-backend.port.js';

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
  return reasoning === undefined ? { inputTokens: input, outputTokens: output } : { inputTokens: input, outputTokens: output, reasoningTokens: reasoning };
}

const reasoningOf = (message: Json | null): string | null => text(message?.reasoning_content) ?? text(message?.reasoning);

export interface UpstreamChat {
  content: string;
  reasoning: string | null;
  finishReason: string;
  usage: TokenUsage | null;
  /** `choices[0].logprobs.content`, when the request asked for logprobs and the upstream sent them. */
  logprobs: OutputTokenLogprobs[] | null;
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

export function readChatCompletion(body: unknown): UpstreamChat | null {
  const choice = obj((obj(body)?.choices as unknown[] | undefined)?.[0]);
  if (!choice) return null;
  const message = obj(choice.message);
  const reasoning = reasoningOf(message);
  return {
    content: text(message?.content) ?? '',
    reasoning: reasoning === '' ? null : reasoning,
    finishReason: text(choice.finish_reason) ?? 'stop',
    usage: readUsage(obj(body)?.usage),
    logprobs: readLogprobs(choice.logprobs),
  };
}

/** One parsed SSE `data:` chunk → the port's stream events (possibly several, or none). */
export function readStreamChunk(chunk: Json): ChatStreamEvent[] {
  const events: ChatStreamEvent[] = [];
  const choice = obj((chunk.choices as unknown[] | undefined)?.[0]);
  if (choice) {
    const delta = obj(choice.delta);
    const content = text(delta?.content);
    const reasoning = reasoningOf(delta);
    if (content || reasoning) {
      const event: ChatStreamEvent = { type: 'delta' };
      if (content) event.content = content;
      if (reasoning) event.reasoning = reasoning;
      events.push(event);
    }
    const finish = text(choice.finish_reason);
    if (finish) events.push({ type: 'finish', finishReason: finish });
  }
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

/**
 * A Messages answer → the port's answer, in the OpenAI shape every wire reads (a carried
 * choice): text blocks → `content`, thinking blocks → `reasoning_content`, `tool_use`
 * blocks → `tool_calls` (input as JSON text), the stop reason → its finish reason. Usage:
 * Anthropic's `input_tokens` excludes the prompt cache's reads and writes, which it counts
 * apart (`cache_read_input_tokens`, `cache_creation_input_tokens`); the port's input count
 * includes them (OpenAI's convention, where `prompt_tokens` includes `cached_tokens`), so
 * the three are added up and the cache's parts kept to be billed at their own prices.
 */
import type { CarriedAnswer, TokenUsage } from '../../../../domain/models/inference-backend.port.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** Messages stop reasons → OpenAI finish reasons (a refusal is a content filter's stop). */
const FINISH: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const finishReasonOf = (stopReason: unknown): string => (typeof stopReason === 'string' ? (FINISH[stopReason] ?? 'stop') : 'stop');

/** Messages usage → port usage (input counts the cache's reads and writes). */
export function readUsage(raw: unknown): TokenUsage | null {
  const usage = obj(raw);
  if (!usage || typeof usage.input_tokens !== 'number') return null;
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  const out: TokenUsage = { inputTokens: num(usage.input_tokens) + cacheRead + cacheWrite, outputTokens: num(usage.output_tokens) };
  if (cacheRead > 0) out.cachedTokens = cacheRead;
  if (cacheWrite > 0) out.cacheWriteTokens = cacheWrite;
  return out;
}

export interface MessagesAnswer {
  content: string;
  reasoning: string | null;
  finishReason: string;
  usage: TokenUsage | null;
  carried: CarriedAnswer;
}

/** A tool_use block as an OpenAI tool call. */
export const toolCallOf = (block: Json) => ({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });

export function readMessage(raw: unknown): MessagesAnswer | null {
  const body = obj(raw);
  if (!body || !Array.isArray(body.content)) return null;
  let content = '';
  let reasoning = '';
  const toolCalls: Json[] = [];
  for (const item of body.content) {
    const block = obj(item);
    if (block?.type === 'text' && typeof block.text === 'string') content += block.text;
    else if (block?.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    else if (block?.type === 'tool_use') toolCalls.push(toolCallOf(block));
  }
  const finishReason = finishReasonOf(body.stop_reason);
  const refused = body.stop_reason === 'refusal';
  // A refusal is OpenAI's `refusal` beside a null content; tool calls beside no text, a null content too.
  const message: Json = { role: 'assistant', content: refused || (content === '' && toolCalls.length > 0) ? null : content };
  if (refused) message.refusal = content || 'The provider declined to answer.';
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    content,
    reasoning: reasoning === '' ? null : reasoning,
    finishReason,
    usage: readUsage(body.usage),
    carried: { choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }], fields: {} },
  };
}

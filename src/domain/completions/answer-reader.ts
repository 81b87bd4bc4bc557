/**
 * The one reader of what a chat engine answered: an upstream's carried answer (OpenAI's
 * choices, as sent) or an in-process runtime's deltas and result, turned into the
 * semantic events a writer builds its wire from: reasoning, text (with its logprobs),
 * refusal, tool-call deltas, the finish reason and usage, with the fields Sluice does not
 * read still carried. Choice 0 only: a wire that has no `n` reads the first answer (the
 * chat-completions writer relays every choice as sent, and does not read these).
 */
import type { ChatStreamEvent, TokenUsage, ToolCallOut } from '../models/inference-backend.port.js';
import type { ChatResult } from './chat-runner.js';

type Json = Record<string, unknown>;

export type AnswerEvent =
  | { type: 'reasoning'; text: string }
  /** The provider's signature on the reasoning just read: it ends that thinking block. */
  | { type: 'reasoning_signature'; signature: string }
  /** A provider's encrypted reasoning, as sent (Anthropic's redacted_thinking). */
  | { type: 'redacted_reasoning'; data: string }
  | { type: 'text'; text: string; logprobs: Json[] | null }
  | { type: 'refusal'; text: string }
  /** A tool call's part: `index` is the engine's; null for a whole call an in-process runtime made. */
  | { type: 'tool_call'; index: number | null; id?: string; name?: string; arguments: string }
  | { type: 'finish'; reason: string }
  | { type: 'usage'; usage: TokenUsage }
  /** The engine's own fields beside its choices, as sent. */
  | { type: 'fields'; fields: Json };

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `logprobs.content` of a choice, when the engine sent it. */
const logprobsOf = (choice: Json): Json[] | null => {
  const content = obj(choice.logprobs)?.content;
  return Array.isArray(content) ? (content.filter((c) => obj(c) !== null) as Json[]) : null;
};

const firstChoice = (choices: readonly Json[]): Json | undefined => choices.find((c) => (c.index ?? 0) === 0);

function toolCallsOf(calls: unknown, out: AnswerEvent[]): void {
  if (!Array.isArray(calls)) return;
  for (const [position, raw] of calls.entries()) {
    const call = obj(raw);
    if (!call) continue;
    const fn = obj(call.function);
    out.push({
      type: 'tool_call',
      index: typeof call.index === 'number' ? call.index : position,
      id: typeof call.id === 'string' ? call.id : undefined,
      name: typeof fn?.name === 'string' ? fn.name : undefined,
      arguments: str(fn?.arguments),
    });
  }
}

/** Text events, left out when empty (an empty delta says nothing). */
function pushText(out: AnswerEvent[], type: 'reasoning' | 'refusal', text: string): void {
  if (text !== '') out.push({ type, text });
}

/**
 * Reasoning: its text, or, when the engine sent its signed blocks (`thinking_blocks`, an
 * anthropic-protocol upstream's), each block's text, signature or redacted data in order.
 * In a stream, the blocks carry no text (it came as reasoning deltas), only the signature.
 */
function readReasoning(message: Json, reasoning: string, out: AnswerEvent[]): void {
  const blocks = Array.isArray(message.thinking_blocks) ? message.thinking_blocks.map(obj).filter((b): b is Json => b !== null) : [];
  if (!blocks.some((b) => str(b.thinking) !== '')) pushText(out, 'reasoning', reasoning);
  for (const block of blocks) {
    if (block.type === 'thinking') {
      pushText(out, 'reasoning', str(block.thinking));
      if (str(block.signature) !== '') out.push({ type: 'reasoning_signature', signature: str(block.signature) });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') out.push({ type: 'redacted_reasoning', data: block.data });
  }
}

/** One message or delta (choice 0's): reasoning, then text and refusal, then tool calls. */
function readMessage(message: Json, reasoning: string, logprobs: Json[] | null, out: AnswerEvent[]): void {
  readReasoning(message, reasoning, out);
  const text = str(message.content);
  if (text !== '') out.push({ type: 'text', text, logprobs });
  pushText(out, 'refusal', str(message.refusal));
  toolCallsOf(message.tool_calls, out);
}

/** An in-process runtime's answer: reasoning, text, then its whole tool calls. */
function readOwn(reasoning: string, text: string, calls: readonly ToolCallOut[] | undefined, out: AnswerEvent[]): void {
  pushText(out, 'reasoning', reasoning);
  if (text !== '') out.push({ type: 'text', text, logprobs: null });
  for (const call of calls ?? []) out.push({ type: 'tool_call', index: null, id: call.id, name: call.name, arguments: call.arguments });
}

/** A whole answer: what it said, then its finish reason and usage. */
export function readResult(result: ChatResult): AnswerEvent[] {
  const out: AnswerEvent[] = [];
  const choice = result.carried ? firstChoice(result.carried.choices) : undefined;
  const message = obj(choice?.message);
  if (!choice || !message) readOwn(result.reasoning ?? '', result.content, result.toolCalls, out);
  else readMessage(message, (result.reasoning ?? '') || str(message.reasoning), logprobsOf(choice), out);
  if (result.carried && Object.keys(result.carried.fields).length > 0) out.push({ type: 'fields', fields: result.carried.fields });
  out.push({ type: 'finish', reason: result.finishReason }, { type: 'usage', usage: result.usage });
  return out;
}

/** One event of a stream (the chat call's: its last is the usage billed). */
export function readStreamEvent(event: ChatStreamEvent): AnswerEvent[] {
  const out: AnswerEvent[] = [];
  if (event.type === 'delta') readOwn(event.reasoning ?? '', event.content ?? '', event.toolCalls, out);
  else if (event.type === 'finish') out.push({ type: 'finish', reason: event.finishReason });
  else if (event.type === 'usage') out.push({ type: 'usage', usage: event.usage });
  else {
    const choice = firstChoice(event.carried.choices);
    const delta = obj(choice?.delta);
    if (choice && delta) readMessage(delta, str(delta.reasoning_content) || str(delta.reasoning), logprobsOf(choice), out);
    if (Object.keys(event.carried.fields).length > 0) out.push({ type: 'fields', fields: event.carried.fields });
    if (typeof choice?.finish_reason === 'string') out.push({ type: 'finish', reason: choice.finish_reason });
  }
  return out;
}

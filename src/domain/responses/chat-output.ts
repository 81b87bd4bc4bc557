/**
 * What a chat engine answered → the response's output: a whole answer (message with
 * content, refusal, tool_calls and reasoning) or a stream's events (deltas as the engine
 * sent them; choice 0 only, the Responses API has no `n`).
 */
import type { ChatStreamEvent } from '../models/inference-backend.port.js';
import type { ChatResult } from '../completions/chat-runner.js';
import type { ResponseOutput } from './output-items.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `logprobs.content` of a choice, when the engine sent it. */
const logprobsOf = (choice: Json): Json[] | null => {
  const content = obj(choice.logprobs)?.content;
  return Array.isArray(content) ? (content.filter((c) => obj(c) !== null) as Json[]) : null;
};

function applyToolCalls(output: ResponseOutput, calls: unknown): void {
  if (!Array.isArray(calls)) return;
  for (const [position, raw] of calls.entries()) {
    const call = obj(raw);
    if (!call) continue;
    const fn = obj(call.function);
    output.toolCall({
      index: typeof call.index === 'number' ? call.index : position,
      id: typeof call.id === 'string' ? call.id : undefined,
      name: typeof fn?.name === 'string' ? fn.name : undefined,
      arguments: str(fn?.arguments),
    });
  }
}

/** Applies one message or delta (choice 0's): reasoning, then text and refusal, then tool calls. */
function applyMessage(output: ResponseOutput, message: Json, logprobs: Json[] | null): void {
  output.reasoning(str(message.reasoning_content) || str(message.reasoning));
  output.text(str(message.content), logprobs);
  output.refusal(str(message.refusal));
  applyToolCalls(output, message.tool_calls);
}

const firstChoice = (choices: readonly Json[]): Json | undefined => choices.find((c) => (c.index ?? 0) === 0);

/** A whole answer into `output`. */
export function applyResult(output: ResponseOutput, result: ChatResult): void {
  const choice = result.carried ? firstChoice(result.carried.choices) : undefined;
  const message = obj(choice?.message);
  if (!choice || !message) {
    output.reasoning(result.reasoning ?? '');
    output.text(result.content, null);
    for (const call of result.toolCalls ?? []) output.wholeToolCall(call);
    return;
  }
  applyMessage(output, { ...message, reasoning_content: result.reasoning ?? '' }, logprobsOf(choice));
}

/** One stream event into `output`; returns the finish reason when the event carries one. */
export function applyStreamEvent(output: ResponseOutput, event: ChatStreamEvent): string | null {
  if (event.type === 'delta') {
    output.reasoning(event.reasoning ?? '');
    output.text(event.content ?? '', null);
    for (const call of event.toolCalls ?? []) output.wholeToolCall(call);
    return null;
  }
  if (event.type === 'finish') return event.finishReason;
  if (event.type !== 'chunk') return null;
  const choice = firstChoice(event.carried.choices);
  if (!choice) return null;
  const delta = obj(choice.delta);
  if (delta) applyMessage(output, delta, logprobsOf(choice));
  return typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
}

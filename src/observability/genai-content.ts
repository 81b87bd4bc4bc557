/**
 * A traced model call's input and output, for a project that logs bodies (the request
 * log's `logging.bodies`, told to the call through its story): one event on the call's
 * GenAI span named `gen_ai.client.inference.operation.details`, with the attributes
 * `gen_ai.input.messages` and `gen_ai.output.messages` in the conventions' message schemas
 * (a message is a role and its parts, of type `text`, `reasoning`, `tool_call` or
 * `tool_call_response`; an output message per choice, with its `finish_reason`).
 *
 * Where, per the current GenAI conventions: the content attributes are opt-in, and belong
 * either on the inference span itself or on that event, which "could be used to store input
 * and output details independently from traces". Sluice puts them on the event, as an event
 * of the span, so a trace backend shows them with the call and a collector can drop them by
 * event name without touching the span's attributes. Span event attributes cannot hold
 * structured values, so each is the JSON text of its messages (the conventions allow a JSON
 * string where the structured form is not supported).
 *
 * `full` keeps the messages as the model got and gave them; `redacted` takes credentials
 * out exactly as the request log does (domain/request-log/redaction.ts), the caller's own
 * credentials included; `off` records nothing, not even the event. Embeddings record
 * nothing (the conventions define no content for them). The text is not cut here: the SDK's
 * OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT bounds it when set.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { CallContext, ChatMessage, ChatStreamEvent, ToolCallOut } from '../domain/models/inference-backend.port.js';
import { redactJson } from '../domain/request-log/redaction.js';

export const CONTENT_EVENT = 'gen_ai.client.inference.operation.details';

export interface ContentCapture {
  mode: 'redacted' | 'full';
  secrets: readonly string[];
}

type Part = Record<string, unknown>;
interface InputMessage {
  role: string;
  parts: Part[];
}
interface OutputMessage extends InputMessage {
  finish_reason: string;
}

/** What the call's project keeps of bodies; null when nothing (no story, `off`). */
export function contentCapture(call: CallContext): ContentCapture | null {
  const mode = call.story?.bodyMode;
  if (mode !== 'redacted' && mode !== 'full') return null;
  return { mode, secrets: call.story?.secrets ?? [] };
}

/** Adds the call's content event to its span (before the span ends). */
export function recordContent(span: Span, capture: ContentCapture, input: InputMessage[], output: OutputMessage[]): void {
  const kept = (messages: unknown) => JSON.stringify(capture.mode === 'redacted' ? redactJson(messages, capture.secrets) : messages);
  const attributes: Attributes = { 'gen_ai.input.messages': kept(input), 'gen_ai.output.messages': kept(output) };
  span.addEvent(CONTENT_EVENT, attributes);
}

const argumentsOf = (text: unknown): unknown => {
  if (typeof text !== 'string') return text ?? null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

/** An OpenAI tool call (`{id, function: {name, arguments}}`) or a runtime's as a `tool_call` part. */
function toolCallPart(call: Record<string, unknown> | ToolCallOut): Part {
  const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
  const name = fn?.name ?? (call as ToolCallOut).name;
  const args = fn ? fn.arguments : (call as ToolCallOut).arguments;
  return { type: 'tool_call', id: call.id ?? null, name: name ?? null, arguments: argumentsOf(args) };
}

function inputMessage(message: ChatMessage): InputMessage {
  if (message.role === 'tool') return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.tool_call_id ?? null, response: message.content }] };
  const parts: Part[] = [];
  if (message.reasoning) parts.push({ type: 'reasoning', content: message.reasoning });
  if (message.content !== '') parts.push({ type: 'text', content: message.content });
  for (const call of message.tool_calls ?? []) parts.push(toolCallPart(call));
  return { role: message.role, parts };
}

/** The chat history the model got, or a text completion's prompt as one user message. */
export function inputMessages(call: CallContext): InputMessage[] {
  const { messages, promptText } = call as { messages?: unknown; promptText?: unknown };
  if (Array.isArray(messages)) return (messages as ChatMessage[]).map(inputMessage);
  if (typeof promptText === 'string') return [{ role: 'user', parts: [{ type: 'text', content: promptText }] }];
  return [];
}

/** One choice of the answer as it is put together (a stream's deltas, or an answer at once). */
class ChoiceParts {
  text = '';
  reasoning = '';
  toolCalls = new Map<number, { id: unknown; name: string; arguments: string }>();
  finishReason = '';

  addToolDelta(delta: Record<string, unknown>, position: number): void {
    const index = typeof delta.index === 'number' ? delta.index : position;
    const fn = (delta.function ?? {}) as { name?: unknown; arguments?: unknown };
    const known = this.toolCalls.get(index) ?? { id: delta.id ?? null, name: '', arguments: '' };
    if (typeof fn.name === 'string') known.name += fn.name;
    if (typeof fn.arguments === 'string') known.arguments += fn.arguments;
    this.toolCalls.set(index, known);
  }

  message(): OutputMessage {
    const parts: Part[] = [];
    if (this.reasoning !== '') parts.push({ type: 'reasoning', content: this.reasoning });
    if (this.text !== '') parts.push({ type: 'text', content: this.text });
    for (const call of this.toolCalls.values()) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: argumentsOf(call.arguments) });
    return { role: 'assistant', parts, finish_reason: this.finishReason };
  }
}

/** An upstream choice (`message`, a stream's `delta`, or a completion's `text`) added to its parts. */
function addCarriedChoice(parts: ChoiceParts, choice: Record<string, unknown>): void {
  const body = (choice.message ?? choice.delta ?? {}) as Record<string, unknown>;
  if (typeof choice.text === 'string') parts.text += choice.text;
  if (typeof body.content === 'string') parts.text += body.content;
  const reasoning = body.reasoning_content ?? body.reasoning;
  if (typeof reasoning === 'string') parts.reasoning += reasoning;
  if (Array.isArray(body.tool_calls)) (body.tool_calls as Record<string, unknown>[]).forEach((call, i) => parts.addToolDelta(call, i));
  if (typeof choice.finish_reason === 'string') parts.finishReason = choice.finish_reason;
}

/** The answer's messages, a choice each, put together from what the model gave. */
export class OutputMessages {
  #choices = new Map<number, ChoiceParts>();

  #choice(index: unknown): ChoiceParts {
    const at = typeof index === 'number' ? index : 0;
    let parts = this.#choices.get(at);
    if (!parts) this.#choices.set(at, (parts = new ChoiceParts()));
    return parts;
  }

  /** A stream's event. */
  add(event: ChatStreamEvent): void {
    if (event.type === 'chunk') for (const choice of event.carried.choices) addCarriedChoice(this.#choice(choice.index), choice);
    else if (event.type === 'finish') this.#choice(0).finishReason = event.finishReason;
    else if (event.type === 'delta') {
      const parts = this.#choice(0);
      if (event.content) parts.text += event.content;
      if (event.reasoning) parts.reasoning += event.reasoning;
      for (const [i, call] of (event.toolCalls ?? []).entries()) parts.toolCalls.set(parts.toolCalls.size + i, { id: call.id, name: call.name, arguments: call.arguments });
    }
  }

  /** An answer given at once: an upstream's choices as sent, else a runtime's text, reasoning and tool calls. */
  addAnswer(output: unknown): void {
    const answer = output as { content?: unknown; reasoning?: unknown; finishReason?: unknown; toolCalls?: ToolCallOut[]; carried?: { choices: Record<string, unknown>[] } };
    if (answer.carried && answer.carried.choices.length > 0) {
      for (const choice of answer.carried.choices) addCarriedChoice(this.#choice(choice.index), choice);
      return;
    }
    const parts = this.#choice(0);
    if (typeof answer.content === 'string') parts.text = answer.content;
    if (typeof answer.reasoning === 'string') parts.reasoning = answer.reasoning;
    if (typeof answer.finishReason === 'string') parts.finishReason = answer.finishReason;
    for (const [i, call] of (answer.toolCalls ?? []).entries()) parts.toolCalls.set(i, { id: call.id, name: call.name, arguments: call.arguments });
  }

  messages(): OutputMessage[] {
    return [...this.#choices.entries()].sort(([a], [b]) => a - b).map(([, parts]) => parts.message());
  }
}

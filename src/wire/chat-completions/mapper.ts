/**
 * A validated chat-completion body (src/wire/chat-completions/body.ts) → the ChatRequest the
 * domain's chat call runs. Roles: developer becomes system. Content: a string, or text
 * parts joined with newlines (other parts, and text parts with more than their text such as
 * `cache_control`, are carried as sent). Every field Sluice does
 * not interpret is carried through (`sampling`); `metadata` carries model options;
 * `categories` carries candidate labels.
 */
import { invalidRequest } from '../../domain/shared/errors.js';
import type { ChatMessage } from '../../domain/models/inference-backend.port.js';
import { CHAT_ROLES, TEXT_PARTS, type ChatRequest } from '../../domain/completions/chat-request.js';
import type { ChatCompletionRequestBody, ChatMessageIn } from './body.js';
import { affinityOf } from '../affinity-hints.js';

/**
 * The message's text, and the content to carry as sent when it is more than text. Text
 * parts may each be empty, but not all of them when nothing else is sent: a message says
 * something (an assistant message with tool calls may say nothing).
 */
function contentOf(message: ChatMessageIn, param: string): { text: string; wire?: unknown } {
  const { content } = message;
  if (typeof content === 'string') return { text: content };
  if (content === null || content === undefined) return { text: '', wire: null };
  let onlyText = true;
  const texts: string[] = [];
  for (const part of content) {
    if (TEXT_PARTS.has(part.type)) texts.push((part as { text: string }).text);
    // A text part with more than its text (Anthropic's `cache_control`, as OpenAI-format clients send it) is carried as sent too.
    if (!TEXT_PARTS.has(part.type) || Object.keys(part).length > 2) onlyText = false;
  }
  const text = texts.join('\n');
  if (onlyText && text === '' && !message.tool_calls?.length) throw invalidRequest(`${param} must not be empty`, param);
  return onlyText ? { text } : { text, wire: content };
}

/** One validated message at `param` (e.g. `messages[2]`). */
export function messageOf(message: ChatMessageIn, param: string): ChatMessage {
  const { text, wire } = contentOf(message, `${param}.content`);
  const out: ChatMessage = { role: CHAT_ROLES.get(message.role)!, content: text };
  if (wire !== undefined) out.wireContent = wire;
  if (typeof message.name === 'string') out.name = message.name;
  if (typeof message.tool_call_id === 'string') out.tool_call_id = message.tool_call_id;
  if (message.tool_calls) out.tool_calls = message.tool_calls;
  return out;
}

/** Fields Sluice interprets itself; every other field is carried to the engine. */
const OWNED: ReadonlySet<string> = new Set(['model', 'messages', 'stream', 'stream_options', 'metadata', 'categories', '__proto__']);

/** The fields Sluice does not interpret, as sent (null is "not sent"). */
export function samplingOf(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const sampling: Record<string, unknown> = {};
  for (const name of Object.keys(body)) {
    const value = body[name];
    if (value !== undefined && value !== null && !OWNED.has(name)) sampling[name] = value;
  }
  return sampling;
}

/** `session`: the coding agent's session id from the request's header (affinity-hints.ts). */
export function chatRequestOf(body: ChatCompletionRequestBody, session?: string): ChatRequest {
  const request: ChatRequest = {
    model: body.model,
    messages: body.messages.map((m, i) => messageOf(m, `messages[${i}]`)),
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    options: body.metadata ?? {},
    sampling: samplingOf(body),
    labels: body.categories?.map((label) => label.trim()) ?? null,
  };
  const affinity = affinityOf(body, session);
  if (affinity) request.affinity = affinity;
  return request;
}

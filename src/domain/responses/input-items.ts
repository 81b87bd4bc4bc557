/**
 * Responses input items → the chat messages every engine speaks. Message parts become
 * chat parts (input_text → text, input_image → image_url, input_file → file,
 * input_audio → input_audio); consecutive function_call items become one assistant
 * message with tool_calls; function_call_output items become tool messages. Reasoning
 * items (their sealed `encrypted_content` opened, or their reasoning_text) go onto the
 * assistant message that follows them, which an upstream sends as `reasoning_content`.
 */
import type { ChatMessage } from '../models/inference-backend.port.js';
import { invalidRequest } from '../shared/errors.js';
import type { ResponseContentPartIn } from './response-items.types.js';
import type { ResponseInputItem } from './responses.types.js';
import { CHAT_ROLES, TEXT_PARTS } from '../completions/chat-request.js';

type Json = Record<string, unknown>;

/** Between a namespace and its function in the flat name the engine knows it by (Codex's own flat form). */
export const NAMESPACE_SEPARATOR = '__';

export const qualifiedToolName = (namespace: string, name: string): string => `${namespace}${NAMESPACE_SEPARATOR}${name}`;

/** One Responses part as the chat part an engine reads. */
function chatPart(part: ResponseContentPartIn): Json {
  switch (part.type) {
    case 'input_image': {
      if (typeof part.image_url !== 'string') return { type: 'file', file: { file_id: part.file_id } };
      const image: Json = { url: part.image_url };
      if (part.detail) image.detail = part.detail;
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      const file: Json = {};
      if (part.file_data) file.file_data = part.file_data;
      if (part.file_id) file.file_id = part.file_id;
      if (part.file_url) file.file_url = part.file_url;
      if (part.filename) file.filename = part.filename;
      return { type: 'file', file };
    }
    case 'input_audio':
      return { type: 'input_audio', input_audio: { data: part.input_audio.data, format: part.input_audio.format } };
    case 'refusal':
      return { type: 'refusal', refusal: part.refusal };
    default:
      return { type: 'text', text: part.text };
  }
}

/** The content's text (text parts joined), and the chat parts to carry when it is more than text. */
function contentOf(content: string | ResponseContentPartIn[], param: string): { text: string; wire?: Json[] } {
  if (typeof content === 'string') return { text: content };
  const texts: string[] = [];
  let onlyText = true;
  for (const part of content) {
    if (TEXT_PARTS.has(part.type)) texts.push((part as { text: string }).text);
    else onlyText = false;
  }
  const text = texts.join('\n');
  if (onlyText && text === '') throw invalidRequest(`${param} must not be empty`, param);
  return onlyText ? { text } : { text, wire: content.map(chatPart) };
}

function messageOf(item: Extract<ResponseInputItem, { role: unknown }>, param: string): ChatMessage {
  const { text, wire } = contentOf(item.content, `${param}.content`);
  const out: ChatMessage = { role: CHAT_ROLES.get(item.role)!, content: text };
  if (wire !== undefined) out.wireContent = wire;
  if (typeof item.name === 'string') out.name = item.name;
  if (typeof item.tool_call_id === 'string') out.tool_call_id = item.tool_call_id;
  return out;
}

/** A function_call item as a chat tool call. */
const toolCallOf = (item: Extract<ResponseInputItem, { type: 'function_call' }>): Json => ({
  id: item.call_id,
  type: 'function',
  function: { name: item.namespace ? qualifiedToolName(item.namespace, item.name) : item.name, arguments: item.arguments },
});

function toolOutputOf(item: Extract<ResponseInputItem, { type: 'function_call_output' }>, param: string): ChatMessage {
  if (typeof item.output === 'string') return { role: 'tool', tool_call_id: item.call_id, content: item.output };
  const { text, wire } = contentOf(item.output, `${param}.output`);
  const out: ChatMessage = { role: 'tool', tool_call_id: item.call_id, content: text };
  if (wire !== undefined) out.wireContent = wire;
  return out;
}

/** Opens a reasoning item's `encrypted_content` (at `param`); throws when this server did not seal it. */
export type OpenReasoning = (sealed: string, param: string) => string;

/** A reasoning item's text: its sealed content opened, else its reasoning_text parts; null without either. */
function reasoningOf(item: Extract<ResponseInputItem, { type: 'reasoning' }>, at: string, open: OpenReasoning | null): string | null {
  if (typeof item.encrypted_content === 'string' && open) return open(item.encrypted_content, `${at}.encrypted_content`);
  const parts = Array.isArray(item.content) ? item.content : [];
  const texts = parts.filter((part) => part?.type === 'reasoning_text' && typeof part.text === 'string').map((part) => part.text!);
  return texts.length > 0 ? texts.join('') : null;
}

/**
 * The items as chat messages; `param` names the list in errors (`input`). A function call
 * joins the assistant message just before it (its text, or other calls of the same turn).
 * Reasoning goes onto the assistant message that follows it (`reasoning`), opened by
 * `open` when sealed; without `open`, sealed reasoning is left for the service to open.
 */
export function messagesOfItems(items: readonly ResponseInputItem[], param: string, open: OpenReasoning | null = null): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let reasoning: string | null = null;
  for (const [i, item] of items.entries()) {
    const at = `${param}[${i}]`;
    if (item.type === 'reasoning') {
      const text = reasoningOf(item, at, open);
      if (text !== null) reasoning = reasoning === null ? text : `${reasoning}\n${text}`;
      continue;
    }
    const before = messages.at(-1);
    const carrier = appendItem(messages, item, at);
    // Reasoning belongs to the assistant turn that follows it, or, just before a user's or a tool's message, to the one it followed.
    const turn = carrier.role === 'assistant' ? carrier : before?.role === 'assistant' && before !== carrier ? before : null;
    if (reasoning !== null && turn) turn.reasoning = turn.reasoning === undefined ? reasoning : `${turn.reasoning}\n${reasoning}`;
    reasoning = null;
  }
  return messages;
}

/** Appends one item's message (a function call joins the assistant message before it); returns the message it went into. */
function appendItem(messages: ChatMessage[], item: Exclude<ResponseInputItem, { type: 'reasoning' }>, at: string): ChatMessage {
  if (item.type === 'function_call') {
    const last = messages.at(-1);
    if (last?.role === 'assistant' && last.tool_call_id === undefined) {
      last.tool_calls = [...(last.tool_calls ?? []), toolCallOf(item)];
      if (last.content === '' && last.wireContent === undefined) last.wireContent = null;
      return last;
    }
    messages.push({ role: 'assistant', content: '', wireContent: null, tool_calls: [toolCallOf(item)] });
  } else if (item.type === 'function_call_output') {
    messages.push(toolOutputOf(item, at));
  } else {
    messages.push(messageOf(item, at));
  }
  return messages.at(-1)!;
}

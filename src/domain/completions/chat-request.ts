/**
 * A validated chat-completion body (src/wire/chat-completions.ts) → the ChatRequest the
 * service runs. Roles: developer becomes system. Content: a string, or text parts joined
 * with newlines. Sampling parameters pass through; `metadata` carries model options;
 * `categories` carries candidate labels.
 */
import { invalidRequest } from '../shared/errors.js';
import type { ChatMessage, ChatRole } from '../../inference/backend.js';
import type { ChatCompletionRequestBody, ChatMessageIn } from '../../wire/chat-completions.js';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  options: Record<string, unknown>;
  sampling: Record<string, unknown>;
  /** Labels from `categories`; labels in a system message are read later, per model. */
  labels: string[] | null;
}

/** A Map: the role is the client's string, and `constructor` must not name a role. */
const ROLES: ReadonlyMap<string, ChatRole> = new Map([
  ['system', 'system'],
  ['developer', 'system'],
  ['user', 'user'],
  ['assistant', 'assistant'],
  ['tool', 'tool'],
]);

/** Parts that are each allowed to be empty, but not all of them: a message says something. */
function contentText(content: ChatMessageIn['content'], param: string): string {
  if (typeof content === 'string') return content;
  const joined = content.map((part) => part.text).join('\n');
  if (joined === '') throw invalidRequest(`${param} must not be empty`, param);
  return joined;
}

/** One validated message at `param` (e.g. `messages[2]`). */
export function messageOf(message: ChatMessageIn, param: string): ChatMessage {
  const out: ChatMessage = { role: ROLES.get(message.role)!, content: contentText(message.content, `${param}.content`) };
  if (typeof message.name === 'string') out.name = message.name;
  if (typeof message.tool_call_id === 'string') out.tool_call_id = message.tool_call_id;
  return out;
}

const SAMPLING_FIELDS = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'reasoning_effort',
  'response_format',
  'stop',
] as const;

/** Sampling parameters every runtime understands, as sent (null is "not sent"). */
export function samplingOf(body: Partial<Record<(typeof SAMPLING_FIELDS)[number], unknown>>): Record<string, unknown> {
  const sampling: Record<string, unknown> = {};
  for (const name of SAMPLING_FIELDS) {
    const value = body[name];
    if (value !== undefined && value !== null) sampling[name] = value;
  }
  return sampling;
}

export function chatRequestOf(body: ChatCompletionRequestBody): ChatRequest {
  return {
    model: body.model,
    messages: body.messages.map((m, i) => messageOf(m, `messages[${i}]`)),
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    options: body.metadata ?? {},
    sampling: samplingOf(body),
    labels: body.categories?.map((label) => label.trim()) ?? null,
  };
}

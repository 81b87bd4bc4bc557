/**
 * The chat call a chat-completions request makes, as the domain takes it (the wire's
 * mapper builds it from the body: src/wire/chat-completions/mapper.ts): the messages as
 * engines read them, the fields Sluice does not interpret carried for the engine
 * (`sampling`), model options and candidate labels. The role and part names every
 * chat-shaped wire maps onto are here too.
 */
import type { AffinityHints, ChatMessage, ChatRole } from '../models/inference-backend.port.js';
import type { Conversation } from './chat-runner.js';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  options: Record<string, unknown>;
  /** Every field Sluice does not interpret, for the engine. */
  sampling: Record<string, unknown>;
  /** Labels from `categories`; labels in a system message are read later, per model. */
  labels: string[] | null;
  /** The session the request belongs to (session affinity); absent when it says nothing of one. */
  affinity?: AffinityHints;
  /** Anthropic's `thinking` setting of a Messages request: an upstream that speaks Messages sends it; any other leaves it out. */
  thinking?: Record<string, unknown>;
}

/** A Map: the role is the client's string, and `constructor` must not name a role. */
export const CHAT_ROLES: ReadonlyMap<string, ChatRole> = new Map([
  ['system', 'system'],
  ['developer', 'system'],
  ['user', 'user'],
  ['assistant', 'assistant'],
  ['tool', 'tool'],
]);

/** The part types whose text the prompt reads (chat's and the Responses API's names). */
export const TEXT_PARTS: ReadonlySet<string> = new Set(['text', 'input_text', 'output_text']);

/** The request as the conversation ChatRunner prepares (labels may be written in the system message). */
export function conversationOf(request: ChatRequest): Conversation {
  const systemIndex = request.messages.findIndex((m) => m.role === 'system');
  const conversation: Conversation = {
    messages: request.messages,
    options: request.options,
    sampling: request.sampling,
    labels: request.labels,
    labelText:
      systemIndex === -1 ? null : { text: request.messages[systemIndex]!.content, param: `messages[${systemIndex}].content` },
    inputParam: 'messages',
    truncation: 'disabled',
  };
  if (request.affinity) conversation.affinity = request.affinity;
  if (request.thinking) conversation.thinking = request.thinking;
  return conversation;
}

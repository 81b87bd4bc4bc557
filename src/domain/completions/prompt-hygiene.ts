/**
 * What coding agents put in a prompt that only Anthropic's API reads, removed before a
 * conversation reaches any other engine (every wire's calls run through here).
 *
 * Claude Code opens its system prompt with a line
 *   x-anthropic-billing-header: cc_version=2.1.100.7b4; cc_entrypoint=cli; cch=eb6c6;
 * whose `cch` (and the version's suffix) change with every request. At the head of the
 * prompt it defeats every engine's prefix cache: each turn re-reads the whole system
 * prompt and tools. The line says nothing to the model, so it is removed whole (as vLLM,
 * SGLang and llama.cpp's peers do), only where it opens a system message; the rest of the
 * text is left byte for byte. `agents.strip_billing_header: false` keeps it.
 */
import type { ChatMessage } from '../models/inference-backend.port.js';
import type { ModelSpec } from '../models/model-spec.types.js';

export interface PromptHygiene {
  /** Remove Claude Code's billing-header line from system prompts (default true). */
  stripBillingHeader: boolean;
}

export const DEFAULT_PROMPT_HYGIENE: PromptHygiene = { stripBillingHeader: true };

/** The upstream protocol that speaks Anthropic's API natively: its engines get the prompt as sent. */
const ANTHROPIC_PROTOCOL = 'anthropic';

/** The conversation's messages as `model`'s engine gets them under `hygiene`. */
export function hygienicMessages(hygiene: PromptHygiene, model: ModelSpec, messages: ChatMessage[]): ChatMessage[] {
  if (!hygiene.stripBillingHeader || model.binding.upstream?.protocol === ANTHROPIC_PROTOCOL) return messages;
  return withoutBillingHeaders(messages);
}

const HEADER_PREFIX = 'x-anthropic-billing-header:';

/** `text` without a billing-header line at its head (and the line break after it); `text` itself when it has none. */
export function stripBillingHeader(text: string): string {
  if (!text.startsWith(HEADER_PREFIX)) return text;
  const end = text.indexOf('\n');
  return end < 0 ? '' : text.slice(end + 1);
}

type Part = { type?: unknown; text?: unknown };

/** Parts without the header at the head of the first text part (dropped when that was all it held). */
function strippedParts(parts: readonly Part[]): Part[] | null {
  const at = parts.findIndex((p) => p.type === 'text' && typeof p.text === 'string');
  if (at < 0) return null;
  const text = parts[at]!.text as string;
  const stripped = stripBillingHeader(text);
  if (stripped === text) return null;
  const out = [...parts];
  if (stripped === '') out.splice(at, 1);
  else out[at] = { ...parts[at], text: stripped };
  return out;
}

/** A system message without the header; null to leave it out (it held nothing else); itself when it has none. */
function strippedMessage(message: ChatMessage): ChatMessage | null {
  const content = stripBillingHeader(message.content);
  const parts = Array.isArray(message.wireContent) ? strippedParts(message.wireContent as Part[]) : null;
  if (content === message.content && parts === null) return message;
  const out: ChatMessage = { ...message, content };
  if (parts !== null) out.wireContent = parts;
  const empty = parts !== null ? parts.length === 0 : content === '' && message.wireContent === undefined;
  return empty ? null : out;
}

/**
 * `messages` with the billing header removed from its system messages; the same array
 * when none has one (the common case costs one prefix check per system message).
 */
export function withoutBillingHeaders(messages: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const next = message.role === 'system' ? strippedMessage(message) : message;
    if (next !== message && out === null) out = messages.slice(0, i);
    if (out !== null && next !== null) out.push(next);
  }
  return out ?? messages;
}

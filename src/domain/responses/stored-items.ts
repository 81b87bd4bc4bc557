/**
 * A request's input as stored items: each with an `id` (for `GET …/input_items`), a
 * message's text given as a string turned into a content part, as OpenAI lists them. A
 * stored conversation is the earlier turns, this turn's input and its output, the items
 * a continuation (`previous_response_id`) puts before its own input.
 */
import { randomString } from '../shared/ids.js';
import type { ResponseItem } from './response-store.port.js';

const PREFIXES: ReadonlyMap<string, string> = new Map([
  ['message', 'msg_'],
  ['function_call', 'fc_'],
  ['function_call_output', 'fco_'],
  ['reasoning', 'rs_'],
]);

const itemId = (type: string): string => `${PREFIXES.get(type) ?? 'item_'}${randomString(24, 'hex')}`;

function messageOf(item: Record<string, unknown>): ResponseItem {
  const { content, ...rest } = item;
  const partType = item.role === 'assistant' ? 'output_text' : 'input_text';
  const parts = typeof content === 'string' ? [{ type: partType, text: content }] : content;
  return { id: itemId('message'), type: 'message', status: 'completed', ...rest, content: parts };
}

/** This turn's input items, as stored and listed. */
export function inputItemsOf(input: unknown): ResponseItem[] {
  if (typeof input === 'string') return [messageOf({ role: 'user', content: input })];
  if (!Array.isArray(input)) return [];
  return input.map((raw: unknown) => {
    const item = (raw ?? {}) as Record<string, unknown>;
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (type === 'message') return messageOf(item);
    return { id: itemId(type), ...item };
  });
}

/** What a continuation of this response starts from. */
export function conversationOf(prior: readonly ResponseItem[], input: readonly ResponseItem[], resource: Record<string, unknown>): ResponseItem[] {
  const output = Array.isArray(resource.output) ? (resource.output as ResponseItem[]) : [];
  return [...prior, ...input, ...output];
}

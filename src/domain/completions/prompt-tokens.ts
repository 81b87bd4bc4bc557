/**
 * Counting a prompt before it runs (Anthropic's count_tokens, a stream's first usage): the
 * conversation rendered as one text the way the model reads it (each message's role and
 * text, an assistant's tool calls, the tools' definitions), and a narrow port that counts
 * such a text for a model and says how it counted. The default counter is the model
 * resolver's: the model's own tokenizer when it has one (`tokenizer`), else the documented
 * estimate, ⌈UTF-8 bytes / 4⌉ (`estimate`). Another method (an engine's `/tokenize`) plugs
 * in behind the same port.
 */
import type { ChatMessage } from '../models/inference-backend.port.js';
import type { ModelSpec } from '../models/model-spec.types.js';
import type { ModelResolver } from '../models/model-resolver.port.js';

/** How a count was made: the model's own tokenizer, the engine's tokenize endpoint, or the bytes/4 estimate. */
export type TokenCountMethod = 'tokenizer' | 'engine' | 'estimate';

export interface PromptTokenCount {
  tokens: number;
  method: TokenCountMethod;
}

/** Counts a rendered prompt (promptTextOf) for a model. */
export interface PromptTokenCounter {
  count(model: ModelSpec, prompt: string): Promise<PromptTokenCount>;
}

/** The counter of the model resolver: its tokenizer for a model that has one, else the estimate. */
export const resolverTokenCounter = (registry: Pick<ModelResolver, 'countTokens'>): PromptTokenCounter => ({
  async count(model, prompt) {
    const counted = await registry.countTokens(model, prompt);
    return { tokens: counted.tokens, method: counted.exact ? 'tokenizer' : 'estimate' };
  },
});

/** One message as the model reads it: its role, its text, and the tool calls an assistant made. */
function messageText(message: ChatMessage): string {
  let text = `${message.role}: ${message.content}`;
  if (message.tool_calls?.length) text += `\n${JSON.stringify(message.tool_calls)}`;
  return text;
}

/** The conversation and its tools as one text, in the order a chat template lays them out (tools first). */
export function promptTextOf(messages: readonly ChatMessage[], tools: readonly unknown[] | undefined): string {
  const parts: string[] = [];
  if (tools && tools.length > 0) parts.push(JSON.stringify(tools));
  for (const message of messages) parts.push(messageText(message));
  return parts.join('\n');
}

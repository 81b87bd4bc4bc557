/** Chat completion wire objects: the full `chat.completion` and the stream's `chat.completion.chunk`s. */
import { randomString } from '../shared/ids.js';
import type { TokenUsage } from '../models/inference-backend.port.js';
import type { ChatResult } from './chat-runner.js';

export const newChatCompletionId = (): string => `chatcmpl-${randomString(15, 'base64url')}`;

export function chatUsageWire(usage: TokenUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function chatCompletionWire(id: string, created: number, model: string, result: ChatResult): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: result.content, refusal: null, annotations: [] };
  if (result.reasoning !== null) message.reasoning = result.reasoning;
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: result.finishReason }],
    usage: chatUsageWire(result.usage),
    system_fingerprint: null,
    service_tier: 'default',
  };
}

/** Builds the chunks of one stream; ids, timestamps and the model are fixed for its lifetime. */
export class ChunkWriter {
  #first = true;

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    /** With `include_usage`, every chunk carries `usage: null` and a final chunk carries the usage (OpenAI's shape). */
    private readonly includeUsage: boolean,
  ) {}

  delta(content: string | undefined, reasoning: string | undefined): Record<string, unknown> {
    const delta: Record<string, unknown> = {};
    if (this.#first) {
      delta.role = 'assistant';
      this.#first = false;
    }
    if (content !== undefined) delta.content = content;
    if (reasoning !== undefined) delta.reasoning = reasoning;
    return this.#chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]);
  }

  finish(reason: string): Record<string, unknown> {
    return this.#chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: reason }]);
  }

  usage(usage: TokenUsage): Record<string, unknown> {
    const chunk = this.#chunk([]);
    chunk.usage = chatUsageWire(usage);
    return chunk;
  }

  #chunk(choices: unknown[]): Record<string, unknown> {
    const chunk: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: null,
      service_tier: 'default',
      choices,
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }
}

/**
 * Text completion wire objects: `text_completion` answers and stream chunks. The engine's
 * choices and fields go out as sent (a completion's choices are the engine's text
 * choices, not chat's), with Sluice's id, model and usage.
 */
import { randomString } from '../../domain/shared/ids.js';
import type { CarriedAnswer, ChatStreamEvent, TokenUsage } from '../../domain/models/inference-backend.port.js';
import { chatUsageWire } from '../chat-completions/writer.js';

type Json = Record<string, unknown>;

export const newCompletionId = (): string => `cmpl-${randomString(24, 'base64url')}`;

const completionUsage = (usage: TokenUsage) => {
  const { prompt_tokens, completion_tokens, total_tokens } = chatUsageWire(usage);
  return { prompt_tokens, completion_tokens, total_tokens };
};

export function textCompletionWire(id: string, created: number, model: string, carried: CarriedAnswer, usage: TokenUsage | null): Json {
  const answer: Json = { id, object: 'text_completion', created, model, choices: carried.choices, system_fingerprint: null };
  Object.assign(answer, carried.fields);
  if (usage) answer.usage = completionUsage(usage);
  return answer;
}

/** The chunks of one stream; id, timestamp and model are fixed for its lifetime. */
export class CompletionChunkWriter {
  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    /** With `include_usage`, every chunk carries `usage: null` and a final chunk carries the usage. */
    private readonly includeUsage: boolean,
  ) {}

  /** One event of the chat call's stream as its chunk; null for what a completion stream does not show. */
  event(event: ChatStreamEvent): Json | null {
    if (event.type === 'chunk') {
      const chunk = textCompletionWire(this.id, this.created, this.model, event.carried, null);
      if (this.includeUsage) chunk.usage = null;
      return chunk;
    }
    if (event.type === 'usage' && this.includeUsage) {
      return { id: this.id, object: 'text_completion', created: this.created, model: this.model, choices: [], usage: completionUsage(event.usage) };
    }
    return null;
  }
}

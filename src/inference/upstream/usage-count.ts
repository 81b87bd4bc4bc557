/**
 * Usage for an engine that reports none: the model's tokenizer.json when installed,
 * else the estimate (../token-counter.ts). Every protocol bills the same way.
 */
import type { Logger } from 'pino';
import type { ModelSpec } from '../../domain/models/model-spec.types.js';
import type { ChatParams, CompletionParams, TokenUsage } from '../../domain/models/inference-backend.port.js';
import type { TokenCounter } from '../token-counter.js';

export class UsageCounter {
  constructor(
    private readonly tokens: TokenCounter,
    private readonly logger: Logger,
  ) {}

  /** Tokens of every text, summed. */
  async all(model: ModelSpec, texts: readonly string[]): Promise<number> {
    let total = 0;
    for (const t of texts) total += (await this.tokens.count(model, t)).tokens;
    return total;
  }

  async chat(params: ChatParams, model: ModelSpec, output: string): Promise<TokenUsage> {
    const input = await this.all(model, params.messages.map((m) => m.content));
    const counted = await this.tokens.count(model, output);
    if (!counted.exact) this.logger.debug({ model: model.id }, 'upstream reported no usage; billing estimated tokens');
    return { inputTokens: input, outputTokens: counted.tokens };
  }

  async completion(params: CompletionParams, model: ModelSpec, output: string): Promise<TokenUsage> {
    return {
      inputTokens: (await this.tokens.count(model, params.promptText)).tokens,
      outputTokens: (await this.tokens.count(model, output)).tokens,
    };
  }

  /** A task's input and its result text. */
  async task(model: ModelSpec, input: string, output: string): Promise<TokenUsage> {
    return { inputTokens: (await this.tokens.count(model, input)).tokens, outputTokens: (await this.tokens.count(model, output)).tokens };
  }
}

/**
 * Counting a prompt before it runs (what `count_tokens` answers), the best way there is
 * for the model, and saying which way counted:
 *
 *   1. `tokenizer`: the model's own tokenizer, in process (a `tokenizer.json` in its model
 *      directory, or the in-process runtime's), on the rendered text;
 *   2. `engine`: the model's engine's `/tokenize` (vLLM, SGLang, llama.cpp), which sees the
 *      messages and tools as the chat template lays them out;
 *   3. `estimate`: ⌈UTF-8 bytes / 4⌉ of the rendered text.
 *
 * `count(model, text)` takes the rendered text alone (what a wire's count route has);
 * `countPrompt` takes the messages and tools beside it, for engines that template them.
 */
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { ModelSpec } from '../models/model-spec.types.js';
import type { EngineCountContext, PromptCount, PromptToCount } from '../models/prompt-count.types.js';
import { newRequestId } from '../shared/ids.js';

/** A count is cheap: an engine that takes longer than this is left for the estimate. */
const ENGINE_COUNT_TIMEOUT_MS = 10_000;

export class PromptCounter {
  constructor(private readonly registry: Pick<ModelResolver, 'countTokens' | 'engineTokens'>) {}

  /** The rendered prompt `text`, counted for `model`. */
  count(model: ModelSpec, text: string, context?: EngineCountContext): Promise<PromptCount> {
    return this.countPrompt(model, { messages: [], text }, context);
  }

  /** The prompt (its messages, tools and rendered text), counted for `model`. */
  async countPrompt(model: ModelSpec, prompt: PromptToCount, context?: EngineCountContext): Promise<PromptCount> {
    const local = await this.registry.countTokens(model, prompt.text);
    if (local.exact) return { tokens: local.tokens, method: 'tokenizer' };
    const asked = context ?? { requestId: newRequestId(), signal: AbortSignal.timeout(ENGINE_COUNT_TIMEOUT_MS) };
    const counted = await this.registry.engineTokens(model, prompt, asked);
    if (counted !== null) return { tokens: counted, method: 'engine' };
    return { tokens: local.tokens, method: 'estimate' };
  }
}

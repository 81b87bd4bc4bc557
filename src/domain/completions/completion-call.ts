/**
 * The legacy text completion as an engine call, for chat models served by an upstream
 * engine: Sluice reads the model, the prompt (for the hold), the caps and `n`; every
 * other field goes to the engine unchanged. Run through the one chat call (chat-call.ts),
 * so it is held, settled and released as chat is.
 */
import { invalidRequest } from '../shared/errors.js';
import type { CallContext, CompletionOutput, CompletionParams, InferenceBackend, TokenUsage } from '../models/inference-backend.port.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { CallOrigin, EngineCall } from './chat-call.js';
import { askedBy, choicesOf, meteredCallOf, outputCapOf } from './metered-call.js';

export const COMPLETIONS_ROUTE = '/v1/completions';

/** A text completion as the domain takes it (the wire's mapper builds it from the body). */
export interface CompletionRequest {
  model: string;
  /** Text, texts, token ids or lists of token ids, as sent. */
  prompt: string | string[] | number[] | number[][];
  suffix: string | null;
  /** The fields the engine receives as sent (the prompt apart). */
  fields: Record<string, unknown>;
  stream: boolean;
  includeUsage: boolean;
}

/** The prompt's texts (token ids count as one byte each: every id is at most one token). */
function promptTexts(prompt: CompletionRequest['prompt']): string[] {
  if (typeof prompt === 'string') return [prompt];
  return prompt.map((p) => (typeof p === 'string' ? p : 'x'.repeat(Array.isArray(p) ? p.length : 1)));
}

/** The fields with the cap its meter granted (for every completion together), when it lowered it. */
function withCap(fields: Record<string, unknown>, cap: number | undefined): Record<string, unknown> {
  if (cap === undefined) return fields;
  const perChoice = Math.max(1, Math.floor(cap / choicesOf(fields)));
  return { ...fields, max_tokens: perChoice };
}

/** The completion's engine call: refused here when the model is no upstream chat model. */
export async function completionCallOf(registry: ModelResolver, request: CompletionRequest, origin: CallOrigin, streaming: boolean): Promise<EngineCall<CompletionOutput>> {
  const model = registry.require(request.model, 'chat');
  if (model.entry.task !== 'chat' || !model.binding.upstream) {
    throw invalidRequest(`Model ${model.id} is not supported on ${COMPLETIONS_ROUTE}; it serves chat models of an upstream engine`, 'model', 'model_not_found');
  }
  const backend: InferenceBackend = await registry.backendFor(model, streaming ? 'completeStream' : 'complete');
  const texts = promptTexts(request.prompt);
  const promptText = texts.join('\n');
  const params = (cap: number | undefined, context: CallContext): CompletionParams => ({
    requestId: context.requestId,
    signal: context.signal,
    model,
    prompt: request.prompt,
    fields: withCap(request.fields, cap),
    promptText,
    onServed: context.onServed,
    story: context.story,
  });
  return {
    model,
    askedAs: registry.isAlias(request.model) ? request.model : null,
    metered: askedBy(meteredCallOf(model, origin.route, origin.requestId, [...texts, request.suffix ?? ''], outputCapOf(model, request.fields)), request.model),
    run: (cap, context) => backend.complete!(params(cap, context)),
    stream: (cap, context) => backend.completeStream!(params(cap, context))[Symbol.asyncIterator](),
    async count(produced): Promise<TokenUsage> {
      return {
        inputTokens: (await registry.countTokens(model, promptText)).tokens,
        outputTokens: (await registry.countTokens(model, produced)).tokens,
      };
    },
  };
}

/**
 * The next token's probabilities after a chat prompt on a GGUF model (the decision
 * route's `llm` scorer): the model's own chat template rendered as for chat, the prompt
 * evaluated once on the model's isolated sequence (the same request must give the same
 * probabilities under any load; GgufModel says how), and the full-vocabulary softmax of
 * the logits at the answer position read for each candidate. A candidate must be one token where the
 * answer starts, as SGLang's decision endpoint requires of its labels.
 */
import type { ControlledEvaluateInputItem, Token } from './llama-api.js';
import { AppError } from '../../../domain/shared/errors.js';
import type { NextTokenOutput, NextTokenParams } from '../../../domain/models/inference-backend.port.js';
import type { GgufModel } from './loader.js';
import { contextExceeded } from './errors.js';

/** A thinking model's template leaves the answer inside an open block: close it, so the next token is the answer. */
const CLOSE_REASONING = '</think>\n\n';

function labelNotOneToken(modelId: string, label: string): AppError {
  return new AppError('invalid_request', `Model ${modelId} cannot answer decisions: the option label "${label}" is not a single token in its vocabulary`, {
    code: 'model_not_supported',
    param: 'model',
  });
}

/**
 * The token `label` adds right after the prompt: the tokenization of prompt + label must
 * extend the prompt's by exactly one token (else the label on its own must be one token).
 */
function labelToken(m: GgufModel, text: string, prompt: readonly Token[], label: string, modelId: string): Token {
  const extended = m.model.tokenize(text + label, true);
  if (extended.length === prompt.length + 1 && prompt.every((t, i) => extended[i] === t)) return extended[prompt.length]!;
  const alone = m.model.tokenize(label, false);
  if (alone.length === 1) return alone[0]!;
  throw labelNotOneToken(modelId, label);
}

export async function nextTokenLogprobs(m: GgufModel, params: NextTokenParams): Promise<NextTokenOutput> {
  const rendered = m.template.render(params.messages);
  const text = rendered.opensReasoning ? rendered.text + CLOSE_REASONING : rendered.text;
  const prompt = m.model.tokenize(text, true);
  if (prompt.length >= m.contextSize) throw contextExceeded(params.model.id, prompt.length, m.contextSize);
  const tokens = params.candidates.map((label) => labelToken(m, text, prompt, label, params.model.id));
  const probabilities = await m.withIsolatedSequence(async (sequence) => {
    // Temperature 0 is llama.cpp's greedy chain, which leaves the logits as they are: the
    // probabilities are the softmax over the whole vocabulary.
    const last: ControlledEvaluateInputItem = [prompt.at(-1)!, { generateNext: { probabilities: true, options: { temperature: 0 } } }];
    const results = await sequence.controlledEvaluate([...prompt.slice(0, -1), last]);
    return results.at(-1)?.next.probabilities;
  });
  if (!probabilities) throw new AppError('internal', `Inference failed for model ${params.model.id}: no probabilities at the answer position`, { code: 'inference_error' });
  return {
    logprobs: params.candidates.map((token, i) => ({ token, logprob: Math.log(probabilities.get(tokens[i]!) ?? 0) })),
    usage: { inputTokens: prompt.length, outputTokens: 0 },
  };
}

/**
 * One chat generation on a GGUF model: render the model's template, tokenize (special
 * tokens parsed), generate on a free sequence with the request's sampling, and split the
 * text into reasoning and answer as it streams. Deltas go to `onDelta`; the result
 * carries the finish reason and token usage.
 */
import type { ChatOutput, ChatParams } from '../../../domain/models/inference-backend.port.js';
import type { GgufModel } from './loader.js';
import type { NodeLlamaCpp } from './llama-api.js';
import { ReasoningSplitter, type SplitText } from './reasoning.js';
import { contextExceeded } from './errors.js';
import { outputFormOf, toolCallOf } from './structured.js';
import { generationOptions, type GgufDelta } from './sampling.js';
import { generateWithFunctions } from './functions.js';

const deltaOf = (part: SplitText): GgufDelta => ({ ...(part.content ? { content: part.content } : {}), ...(part.reasoning ? { reasoning: part.reasoning } : {}) });

/**
 * Generates the answer. With tools the model may call of its own choice (`tool_choice`
 * auto), node-llama-cpp's function calling does (functions.ts). Under a grammar
 * (structured.ts) the text is the answer as it comes (no reasoning split); a tool-form
 * answer is not streamed as text but ends as one tool call, unless it stopped before the
 * call was complete (then its text, `length`).
 */
export async function generateChat(runtime: NodeLlamaCpp, m: GgufModel, params: ChatParams, onDelta?: (delta: GgufDelta) => void): Promise<ChatOutput> {
  const form = await outputFormOf(m, params);
  if (form.kind === 'functions') return generateWithFunctions(runtime, m, params, form.functions, onDelta);
  const { text, opensReasoning } = m.template.render(params.messages, params.sampling.tools);
  const prompt = m.model.tokenize(text, true);
  if (prompt.length >= m.contextSize) throw contextExceeded(params.model.id, prompt.length, m.contextSize);
  const splitter = form.kind === 'text' ? new ReasoningSplitter(opensReasoning) : null;
  let content = '';
  let reasoning = '';
  let generated = 0;
  let reasoningTokens = 0;
  const emit = (part: SplitText) => {
    content += part.content;
    reasoning += part.reasoning;
    if (onDelta && form.kind !== 'tool' && (part.content || part.reasoning)) onDelta(deltaOf(part));
  };
  const result = await m.withSequence(async (sequence) => {
    const completion = new runtime.LlamaCompletion({ contextSequence: sequence });
    try {
      return await completion.generateCompletionWithMeta(prompt, {
        ...generationOptions(params.sampling, prompt.length, m.contextSize, params.signal),
        grammar: form.kind === 'text' ? undefined : form.grammar,
        onToken: (tokens) => {
          generated += tokens.length;
          if (splitter?.inReasoning) reasoningTokens += tokens.length;
        },
        onTextChunk: (chunk) => emit(splitter ? splitter.push(chunk) : { content: chunk, reasoning: '' }),
      });
    } finally {
      completion.dispose({ disposeSequence: false });
    }
  });
  if (splitter) emit(splitter.flush());
  const finishReason = result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
  const sawReasoning = splitter?.sawReasoning === true;
  const usage = { inputTokens: prompt.length, outputTokens: generated, ...(sawReasoning ? { reasoningTokens } : {}) };
  const call = form.kind === 'tool' ? toolCallOf(content) : null;
  if (call) {
    onDelta?.({ toolCalls: [call] });
    return { content: '', reasoning: null, finishReason: 'tool_calls', usage, toolCalls: [call] };
  }
  if (form.kind === 'tool' && onDelta && content) onDelta({ content });
  return { content, reasoning: sawReasoning ? reasoning : null, finishReason, usage };
}

/**
 * One chat generation on a GGUF model: render the model's template, tokenize (special
 * tokens parsed), generate on a free sequence with the request's sampling, and split the
 * text into reasoning and answer as it streams. Deltas go to `onDelta`; the result
 * carries the finish reason and token usage.
 */
import type { ChatOutput, ChatParams, ToolCallOut } from '../../../domain/models/inference-backend.port.js';
import type { GgufModel } from './loader.js';
import type { NodeLlamaCpp } from './llama-api.js';
import { ReasoningSplitter, type SplitText } from './reasoning.js';
import { contextExceeded } from './errors.js';
import { outputFormOf, toolCallOf } from './structured.js';

/** Sampling defaults for small on-device chat models when the request sets none. */
const DEFAULT_TEMPERATURE = 0.3;
const DEFAULT_MIN_P = 0.15;

interface Sampling {
  maxTokens: number | undefined;
  temperature: number;
  topP: number | undefined;
  seed: number | undefined;
  stop: string[];
  frequencyPenalty: number | undefined;
  presencePenalty: number | undefined;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function readSampling(s: Record<string, unknown>): Sampling {
  const stop = typeof s.stop === 'string' ? [s.stop] : Array.isArray(s.stop) ? s.stop.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  return {
    maxTokens: num(s.max_completion_tokens) ?? num(s.max_tokens) ?? num(s.max_output_tokens),
    temperature: num(s.temperature) ?? DEFAULT_TEMPERATURE,
    topP: num(s.top_p),
    seed: num(s.seed),
    stop,
    frequencyPenalty: num(s.frequency_penalty),
    presencePenalty: num(s.presence_penalty),
  };
}

/** What a generation streams: text split into answer and reasoning, or (at its end) the tool calls it made. */
export interface GgufDelta {
  content?: string;
  reasoning?: string;
  toolCalls?: ToolCallOut[];
}

const deltaOf = (part: SplitText): GgufDelta => ({ ...(part.content ? { content: part.content } : {}), ...(part.reasoning ? { reasoning: part.reasoning } : {}) });

/**
 * Generates the answer. Under a grammar (structured.ts) the text is the answer as it
 * comes (no reasoning split); a tool-form answer is not streamed as text but ends as one
 * tool call, unless it stopped before the call was complete (then its text, `length`).
 */
export async function generateChat(runtime: NodeLlamaCpp, m: GgufModel, params: ChatParams, onDelta?: (delta: GgufDelta) => void): Promise<ChatOutput> {
  const form = await outputFormOf(m, params);
  const { text, opensReasoning } = m.template.render(params.messages, params.sampling.tools);
  const prompt = m.model.tokenize(text, true);
  if (prompt.length >= m.contextSize) throw contextExceeded(params.model.id, prompt.length, m.contextSize);
  const sampling = readSampling(params.sampling);
  const room = m.contextSize - prompt.length;
  const maxTokens = Math.max(1, Math.min(sampling.maxTokens ?? room, room));
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
  const penalties = sampling.frequencyPenalty || sampling.presencePenalty;
  const result = await m.withSequence(async (sequence) => {
    const completion = new runtime.LlamaCompletion({ contextSequence: sequence });
    try {
      return await completion.generateCompletionWithMeta(prompt, {
        maxTokens,
        temperature: sampling.temperature,
        minP: sampling.temperature > 0 ? DEFAULT_MIN_P : undefined,
        topP: sampling.topP,
        seed: sampling.seed,
        customStopTriggers: sampling.stop.length > 0 ? sampling.stop : undefined,
        repeatPenalty: penalties ? { frequencyPenalty: sampling.frequencyPenalty, presencePenalty: sampling.presencePenalty } : undefined,
        grammar: form.kind === 'text' ? undefined : form.grammar,
        signal: params.signal,
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

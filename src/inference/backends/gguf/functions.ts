/**
 * Tools the model may call of its own choice (`tool_choice` auto, the default when tools
 * are sent), through node-llama-cpp's function calling: the model's chat wrapper (resolved
 * from its GGUF chat template) renders the conversation and the functions' definitions in
 * the model's own format, and recognises a call when the model starts one; the call's name
 * and arguments are then generated under a grammar of the tools' names and parameters.
 * The model may answer text instead. Sluice runs no function: generation stops at the
 * calls, answered as `tool_calls` (`finish_reason` `tool_calls`); `parallel_tool_calls`
 * false allows one.
 *
 * The prompt is the wrapper's rendering, not the template render of prompt.ts that plain
 * chat uses: the wrapper is what parses the calls, so it must be what described them.
 */
import type { ChatOutput, ChatParams, ToolCallOut } from '../../../domain/models/inference-backend.port.js';
import { randomString } from '../../../domain/shared/ids.js';
import type { ChatModelFunctions, LlamaChatResponseChunk, NodeLlamaCpp } from './llama-api.js';
import type { GgufModel } from './loader.js';
import type { FunctionDef } from './structured.js';
import { chatHistoryOf } from './chat-history.js';
import { contextExceeded } from './errors.js';
import { ReasoningSplitter } from './reasoning.js';
import { generationOptions, type GgufDelta } from './sampling.js';

/** Makes every function's parameters documented in the prompt (the model sees their schema). */
const DOCUMENT_PARAMS = true;

const functionsFor = (defs: readonly FunctionDef[]): ChatModelFunctions =>
  Object.fromEntries(defs.map((d) => [d.name, { ...(d.description ? { description: d.description } : {}), params: d.parameters }]));

const toolCallOf = (call: { functionName: string; params: unknown }): ToolCallOut => ({
  id: `call_${randomString(24, 'base64url')}`,
  name: call.functionName,
  arguments: JSON.stringify(call.params ?? {}),
});

/** Text chunks split into answer and reasoning: a wrapper's thought segments, and <think> blocks it does not know. */
class AnswerCollector {
  content = '';
  reasoning = '';
  reasoningTokens = 0;
  sawReasoning = false;
  readonly #splitter = new ReasoningSplitter(false);

  constructor(private readonly onDelta: ((delta: GgufDelta) => void) | undefined) {}

  push(chunk: LlamaChatResponseChunk): void {
    if (chunk.type === 'segment') {
      // A thought is reasoning; other segments (a model's comments on its own channel) are not the answer.
      if (chunk.segmentType !== 'thought') return;
      this.sawReasoning = true;
      this.reasoningTokens += chunk.tokens.length;
      this.#emit('', chunk.text);
      return;
    }
    if (this.#splitter.inReasoning) this.reasoningTokens += chunk.tokens.length;
    const part = this.#splitter.push(chunk.text);
    this.#emit(part.content, part.reasoning);
  }

  flush(): void {
    const part = this.#splitter.flush();
    this.#emit(part.content, part.reasoning);
    this.sawReasoning ||= this.#splitter.sawReasoning;
  }

  #emit(content: string, reasoning: string): void {
    this.content += content;
    this.reasoning += reasoning;
    if (this.onDelta && (content || reasoning)) this.onDelta({ ...(content ? { content } : {}), ...(reasoning ? { reasoning } : {}) });
  }
}

export async function generateWithFunctions(
  runtime: NodeLlamaCpp,
  m: GgufModel,
  params: ChatParams,
  defs: readonly FunctionDef[],
  onDelta?: (delta: GgufDelta) => void,
): Promise<ChatOutput> {
  const functions = functionsFor(defs);
  const history = chatHistoryOf(params.messages);
  const wrapper = m.chatWrapper(runtime);
  const { contextText } = wrapper.generateContextState({ chatHistory: history, availableFunctions: functions, documentFunctionParams: DOCUMENT_PARAMS });
  const promptTokens = contextText.tokenize(m.model.tokenizer).length;
  if (promptTokens >= m.contextSize) throw contextExceeded(params.model.id, promptTokens, m.contextSize);
  const answer = new AnswerCollector(onDelta);
  const { result, generated } = await m.withSequence(async (sequence) => {
    const chat = new runtime.LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
    const before = sequence.tokenMeter.usedOutputTokens;
    try {
      const result = await chat.generateResponse(history, {
        ...generationOptions(params.sampling, promptTokens, m.contextSize, params.signal),
        functions,
        documentFunctionParams: DOCUMENT_PARAMS,
        ...(params.sampling.parallel_tool_calls === false ? { maxParallelFunctionCalls: 1 } : {}),
        onResponseChunk: (chunk) => answer.push(chunk),
      });
      // The meter counts every sampled token; the end-of-turn token is not output (as on the plain path).
      const sampled = sequence.tokenMeter.usedOutputTokens - before;
      return { result, generated: result.metadata.stopReason === 'eogToken' ? Math.max(0, sampled - 1) : sampled };
    } finally {
      chat.dispose({ disposeSequence: false });
    }
  });
  answer.flush();
  const usage = { inputTokens: promptTokens, outputTokens: generated, ...(answer.sawReasoning ? { reasoningTokens: answer.reasoningTokens } : {}) };
  const reasoning = answer.sawReasoning ? answer.reasoning : null;
  const calls = (result.functionCalls ?? []).map(toolCallOf);
  if (calls.length > 0) {
    onDelta?.({ toolCalls: calls });
    return { content: answer.content, reasoning, finishReason: 'tool_calls', usage, toolCalls: calls };
  }
  return { content: answer.content, reasoning, finishReason: result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop', usage };
}

/**
 * Counting a whole prompt as a model will see it (what `count_tokens` answers): the
 * conversation's messages, its tools, and the same as one rendered text for counters that
 * take only text. Which method counted is part of the answer.
 */
import type { CallContext, ChatMessage } from './inference-backend.port.js';

export interface PromptToCount {
  /** The messages as the engine would get them (system first). */
  messages: readonly ChatMessage[];
  /** Function tools in OpenAI's chat shape (`{type: 'function', function: {...}}`), when the prompt has any. */
  tools?: readonly unknown[];
  /** The whole prompt rendered as one text (system, messages, tools): what a text-only counter counts. */
  text: string;
}

/**
 * `tokenizer`: the model's own tokenizer, in process; `engine`: the engine's `/tokenize`
 * (vLLM, SGLang, llama.cpp); `estimate`: ⌈UTF-8 bytes / 4⌉ of the rendered text.
 */
export type CountMethod = 'tokenizer' | 'engine' | 'estimate';

export interface PromptCount {
  tokens: number;
  method: CountMethod;
}

/** What an engine count is made with: the caller's request id (sent to the engine) and its abort signal. */
export type EngineCountContext = Pick<CallContext, 'requestId' | 'signal'>;

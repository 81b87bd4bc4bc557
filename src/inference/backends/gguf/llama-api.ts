/**
 * The slice of node-llama-cpp's API the gguf backend uses, described structurally.
 *
 * Why not node-llama-cpp's own types: the package is not a dependency of Sluice. It is
 * installed on demand (`sluice runtimes add gguf`) into the runtimes folder and loaded from
 * there with a dynamic import, so it is absent when Sluice is type-checked and built. As
 * kysely describes the part of better-sqlite3 it calls instead of depending on it, these
 * interfaces name only what the backend calls, shaped as node-llama-cpp 3.x declares it
 * (the version pinned in ./runtime.ts). A change of that pin means checking them against
 * the new version's `dist/index.d.ts`.
 */

/** A vocabulary id (node-llama-cpp brands it; here it is the number it is). */
export type Token = number;

/** node-llama-cpp's `LlamaLogLevel` enum: its members are these strings. */
export type LlamaLogLevelName = 'disabled' | 'fatal' | 'error' | 'warn' | 'info' | 'log' | 'debug';

export interface GetLlamaOptions {
  gpu: false | 'auto' | 'cuda' | 'vulkan' | 'metal';
  /** 'never': use a prebuilt binary only, never build llama.cpp from source. */
  build: 'never' | 'auto' | 'forceRebuild';
  logLevel: LlamaLogLevelName;
  logger: (level: LlamaLogLevelName, message: string) => void;
}

export interface Llama {
  /** The CPU cores llama.cpp does its maths on (the default thread count). */
  readonly cpuMathCores: number;
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  /** A grammar whose every output is JSON valid against `schema` (node-llama-cpp's subset of JSON Schema). */
  createGrammarForJsonSchema(schema: Readonly<Record<string, unknown>>): Promise<LlamaGrammar>;
  /** A built-in grammar: 'json' is any JSON value. */
  getGrammarFor(type: 'json'): Promise<LlamaGrammar>;
}

/** A GBNF grammar that constrains sampling (its stop triggers end generation once it is complete). */
export interface LlamaGrammar {
  readonly grammar: string;
}

/**
 * Threads a context evaluates on: a number is a hint that may be lowered while other
 * evaluations run; `min` makes that many always used (bit-identical decision reads need it).
 */
export type ContextThreads = number | { ideal?: number; min?: number };

/** The model's tokenizer as node-llama-cpp passes it around (chat wrappers' texts tokenize with it). */
export type Tokenizer = (text: string, specialTokens?: boolean) => Token[];

export interface LlamaModel {
  readonly trainContextSize: number;
  readonly tokenizer: Tokenizer;
  readonly fileInfo: { metadata: { tokenizer?: { chat_template?: string } } };
  readonly tokens: { bosString: string | null; eosString: string | null };
  tokenize(text: string, specialTokens?: boolean): Token[];
  createContext(options: { contextSize: number; sequences: number; threads?: ContextThreads }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}

export interface LlamaContext {
  readonly contextSize: number;
  readonly totalSequences: number;
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}

/** One evaluation step: a token, optionally asking for the next token's probabilities. */
export type ControlledEvaluateInputItem =
  | Token
  | [token: Token, options: { generateNext?: { probabilities?: boolean; options?: { temperature?: number } } }];

export interface ControlledEvaluateIndexOutput {
  next: { token?: Token | null; probabilities?: Map<Token, number> };
}

export interface LlamaContextSequence {
  /** Counts the tokens the sequence evaluated: `usedOutputTokens` are those sampled (one per generated token). */
  readonly tokenMeter: { readonly usedOutputTokens: number };
  clearHistory(): Promise<void>;
  controlledEvaluate(input: ControlledEvaluateInputItem[]): Promise<(ControlledEvaluateIndexOutput | undefined)[]>;
}

export interface CompletionOptions {
  maxTokens?: number;
  temperature?: number;
  minP?: number;
  topP?: number;
  seed?: number;
  customStopTriggers?: readonly string[];
  repeatPenalty?: { frequencyPenalty?: number; presencePenalty?: number };
  signal?: AbortSignal;
  grammar?: LlamaGrammar;
  onToken?: (tokens: Token[]) => void;
  onTextChunk?: (text: string) => void;
}

export interface LlamaCompletion {
  generateCompletionWithMeta(input: Token[], options: CompletionOptions): Promise<{ response: string; metadata: { stopReason: string } }>;
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** A function call in a model's earlier answer, with the result it got (chat wrappers render both). */
export interface ChatModelFunctionCall {
  type: 'functionCall';
  name: string;
  params: unknown;
  result: unknown;
}

/** node-llama-cpp's chat history: what a chat wrapper renders into the model's prompt. */
export type ChatHistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: (string | ChatModelFunctionCall)[] };

/** The functions a model may call, by name; `params` is the JSON Schema of their argument object. */
export type ChatModelFunctions = Readonly<Record<string, { readonly description?: string; readonly params?: Readonly<Record<string, unknown>> }>>;

/** Text with special tokens, as chat wrappers render it. */
export interface LlamaText {
  tokenize(tokenizer: Tokenizer): Token[];
}

/** Renders a chat history (and the functions it may call) in a model's chat format, and parses the calls it generates. */
export interface ChatWrapper {
  generateContextState(options: { chatHistory: readonly ChatHistoryItem[]; availableFunctions?: ChatModelFunctions; documentFunctionParams?: boolean }): {
    contextText: LlamaText;
  };
}

/** A generated chunk: the answer's text (`type` undefined) or a segment's (a thinking model's `thought`). */
export interface LlamaChatResponseChunk {
  type: 'segment' | undefined;
  segmentType: 'thought' | 'comment' | undefined;
  text: string;
  tokens: Token[];
}

export interface ChatResponseOptions extends Omit<CompletionOptions, 'grammar' | 'onTextChunk' | 'onToken'> {
  functions: ChatModelFunctions;
  documentFunctionParams: boolean;
  /** Without it, as many calls as the chat format allows in one answer. */
  maxParallelFunctionCalls?: number;
  onResponseChunk: (chunk: LlamaChatResponseChunk) => void;
}

export interface LlamaChat {
  /** Generates the model's answer to `history` and stops at the function calls it makes (it does not run them). */
  generateResponse(
    history: ChatHistoryItem[],
    options: ChatResponseOptions,
  ): Promise<{ functionCalls?: { functionName: string; params: unknown }[]; metadata: { stopReason: string } }>;
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** The module's exports the backend uses. */
export interface NodeLlamaCpp {
  getLlama(options: GetLlamaOptions): Promise<Llama>;
  LlamaCompletion: new (options: { contextSequence: LlamaContextSequence }) => LlamaCompletion;
  LlamaChat: new (options: { contextSequence: LlamaContextSequence; chatWrapper: ChatWrapper }) => LlamaChat;
  /** The chat wrapper for a model: from its GGUF chat template (a specialised wrapper when it matches one), else its name or architecture. */
  resolveChatWrapper(model: LlamaModel, options?: { warningLogs?: boolean }): ChatWrapper;
}

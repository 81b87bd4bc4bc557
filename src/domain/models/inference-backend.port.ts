/**
 * The inference backend port. Every runtime (`openai` upstreams, in-process `onnx` and
 * `gguf`) implements the capabilities it has; the model resolver picks a backend per
 * model, and the domain services and the batch runner call only this interface.
 *
 * Invariants: every call takes an AbortSignal and stops work when it fires; errors are
 * thrown as AppError (normalised inside each backend, never in routes); token counts
 * come from the model's own tokenizer or the upstream's usage, never estimates when
 * either is available.
 */
import type { BackendKind, ModelSpec } from './model-spec.types.js';
import type { EngineCountContext, PromptToCount } from './prompt-count.types.js';

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: ChatRole;
  /**
   * The message's text: its string content, or its text parts joined with newlines (empty
   * beside tool calls). What is counted, and what in-process runtimes read.
   */
  content: string;
  /**
   * The content as the client sent it, when it is more than text (parts with images, audio
   * or files, or null beside tool calls): an upstream receives it unchanged.
   */
  wireContent?: unknown;
  name?: string;
  tool_call_id?: string;
  /** An assistant message's tool calls, carried to an upstream unchanged. */
  tool_calls?: readonly Record<string, unknown>[];
  /** An assistant message's reasoning from an earlier turn (Responses reasoning items): an OpenAI-compatible upstream receives it as `reasoning_content`. */
  reasoning?: string;
  /**
   * An assistant message's thinking blocks as a provider signed them (Anthropic's
   * `thinking` and `redacted_thinking`), from an earlier turn the provider answered: an
   * upstream that speaks Messages receives them unchanged, before the turn's text; any
   * other upstream leaves them out.
   */
  thinking?: readonly ThinkingBlock[];
  /**
   * A system prompt's text blocks as sent, when one has a `cache_control` (Anthropic's
   * prompt cache): an upstream that speaks Messages sends them as its `system` blocks;
   * any other reads `content`, the same text.
   */
  cachedBlocks?: readonly CachedTextBlock[];
}

/** A text block with its prompt-cache marker. */
export interface CachedTextBlock {
  type: 'text';
  text: string;
  cache_control?: Record<string, unknown>;
}

/** A provider's signed reasoning, carried byte for byte. */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

export interface TokenUsage {
  /** Every input token, those read from or written to the engine's prompt cache included. */
  inputTokens: number;
  outputTokens: number;
  /** Of outputTokens, those spent on reasoning (thinking models). */
  reasoningTokens?: number;
  /** Of inputTokens, those read from the provider's prompt cache. */
  cachedTokens?: number;
  /** Of inputTokens, those written to the provider's prompt cache. */
  cacheWriteTokens?: number;
}

/**
 * What a request says about the session it belongs to, for session affinity (the router
 * sends a session's turns to the engine that holds its prefix cache). Each is absent
 * when the request does not carry it; which one keys the session is the model's setting.
 */
export interface AffinityHints {
  /** The body's `prompt_cache_key` (Responses, chat completions). */
  promptCacheKey?: string;
  /** The `X-Claude-Code-Session-Id` header. */
  session?: string;
  /** The root response id of a `previous_response_id` chain (this response's own id on its first turn). */
  chain?: string;
  /** The body's `user`. */
  user?: string;
}

/** Which model and engine served a call, when an upstream router chose (see src/inference/routing/). */
export interface ServedCall {
  /** The model that answered: the one asked for, or a fallback. */
  model: string;
  /** The operator-facing id of the deployment that answered (never a URL). */
  deployment: string;
  /** The model is a fallback of the one asked for. */
  fallback: boolean;
}

/** Where the router tells each try of a deployment (a call's story for the request log). */
export interface AttemptRecorder {
  /** A try that began at `startedAt` (a performance.now() reading) and ended now: its status (null: no answer) and error code. */
  attempt(deployment: string, provider: string | null, status: number | null, errorCode: string | null, startedAt: number): void;
  served(model: string, deployment: string, provider: string | null, fallback: boolean): void;
  /**
   * What the call's project keeps of its bodies (the request log's `logging.bodies`; absent:
   * `off`): a traced call's input and output go into its span only when they are kept.
   */
  readonly bodyMode?: 'off' | 'redacted' | 'full';
  /** The caller's own credentials as sent, which a redacted body never keeps. */
  readonly secrets?: readonly string[];
}

export interface CallContext {
  requestId: string;
  signal: AbortSignal;
  /** Told every attempt of the call and who served it (the request log). */
  story?: AttemptRecorder;
  /** Told which model and deployment serve the call, once one has answered (before a stream's first event). */
  onServed?: (served: ServedCall) => void;
  /** The session the call belongs to, when the request said (session affinity). */
  affinity?: AffinityHints;
  /** The coding agent's session the call belongs to (Claude Code's `X-Claude-Code-Session-Id`), when it named one. */
  sessionId?: string;
  /** The call's tags, recorded on its usage and request log. */
  tags?: readonly string[];
  /** The end user the client named (OpenAI's `user`, Anthropic's `metadata.user_id`). */
  endUser?: string;
  /** The caller's `anthropic-beta` values: an upstream that speaks Messages adds them to its deployment's own. */
  betas?: readonly string[];
}

export interface ChatParams extends CallContext {
  model: ModelSpec;
  messages: ChatMessage[];
  /** Model options from the request's `metadata`. */
  options: Record<string, unknown>;
  /**
   * Every request field Sluice does not interpret itself (temperature, max_tokens, tools,
   * n, logprobs, response_format, …), as sent: an upstream receives them unchanged (less
   * the model's `drop_params`); an in-process runtime reads the ones it knows.
   */
  sampling: Record<string, unknown>;
  /** Anthropic's `thinking` setting of a Messages request: an upstream that speaks Messages sends it; any other leaves it out. */
  thinking?: Record<string, unknown>;
}

/** A token and its log-probability (natural log). */
export interface TokenLogprob {
  token: string;
  logprob: number;
}

/** One output token with the most likely alternatives at its position (OpenAI `logprobs.content[i]`). */
export interface OutputTokenLogprobs extends TokenLogprob {
  top: TokenLogprob[];
}

/**
 * An upstream engine's answer beyond what Sluice reads from it, carried to the client:
 * every choice as sent (message or delta with tool calls, refusal, annotations, reasoning
 * fields; logprobs; finish_reason; index), and the other top-level fields
 * (system_fingerprint, service_tier, …) less those Sluice owns (id, object, created,
 * model, usage, choices).
 */
export interface CarriedAnswer {
  choices: Record<string, unknown>[];
  fields: Record<string, unknown>;
}

export interface ChatOutput {
  content: string;
  reasoning: string | null;
  finishReason: string;
  usage: TokenUsage;
  /** Request id the upstream reported, if any. */
  upstreamRequestId?: string | null;
  /** Per output token, when the request asked for `logprobs` and the backend reported them. */
  logprobs?: OutputTokenLogprobs[];
  /** The engine's answer as sent, from an upstream; in-process runtimes leave it out. */
  carried?: CarriedAnswer;
  /** The tool calls an in-process runtime answered with (finishReason `tool_calls`; content is any text before them). */
  toolCalls?: ToolCallOut[];
}

/** A function call an in-process runtime generated: `arguments` is JSON text, as OpenAI's wire has it. */
export interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The next token after a chat prompt (the decision route's `llm` scorer reads answers off
 * option labels): `candidates` are the tokens asked about. An in-process backend reports
 * exactly the candidates (each must be one token of the model's vocabulary); an upstream
 * reports its top list, in which some candidates may be missing.
 */
export interface NextTokenParams extends CallContext {
  model: ModelSpec;
  messages: ChatMessage[];
  candidates: readonly string[];
}

export interface NextTokenOutput {
  logprobs: TokenLogprob[];
  usage: TokenUsage;
}

export type ChatStreamEvent =
  | { type: 'delta'; content?: string; reasoning?: string; toolCalls?: ToolCallOut[] }
  /** An upstream's chunk as sent (`text`: its content and reasoning, for counting what was produced). */
  | { type: 'chunk'; carried: CarriedAnswer; text: string }
  | { type: 'finish'; finishReason: string }
  | { type: 'usage'; usage: TokenUsage };

/**
 * A legacy text completion (`POST /v1/completions`) on an upstream engine: `prompt` and
 * every other field as the client sent them (`fields`, less those Sluice owns).
 */
export interface CompletionParams extends CallContext {
  model: ModelSpec;
  prompt: unknown;
  fields: Record<string, unknown>;
  /** The prompt's text, for counting when the engine reports no usage. */
  promptText: string;
}

export interface CompletionOutput {
  usage: TokenUsage;
  carried: CarriedAnswer;
}

/** Classification, extraction and summarization models: one text in, one JSON-able result out. */
export interface TaskParams extends CallContext {
  model: ModelSpec;
  input: string;
  /** Candidate labels (zero-shot), from `instructions`, a system message or `categories`. */
  labels: string[] | null;
  options: Record<string, unknown>;
}

export interface TaskOutput {
  /** An object for classifiers and extractors; a string for summarization. */
  result: unknown;
  usage: TokenUsage;
}

export interface EmbeddingParams extends CallContext {
  model: ModelSpec;
  inputs: string[];
}

export interface EmbeddingOutput {
  vectors: Float32Array[] | number[][];
  usage: TokenUsage;
}

/** Scores and flags keyed by category; a moderation model answers each of MODERATION_CATEGORIES (shared/classification). */
export interface ModerationResult {
  categoryScores: Record<string, number>;
  categories: Record<string, boolean>;
  flagged: boolean;
  unsafeScore?: number;
}

export interface ModerationParams extends CallContext {
  model: ModelSpec;
  inputs: string[];
  options: Record<string, unknown>;
}

export interface ModerationOutput {
  results: ModerationResult[];
  usage: TokenUsage;
}

/** Speech recognition: 16 kHz mono samples in, timed segments out. */
export interface TranscriptionParams extends CallContext {
  model: ModelSpec;
  /** 16 kHz mono PCM, samples in [-1, 1]. */
  audio: Float32Array;
  task: 'transcribe' | 'translate';
  /** ISO-639-1 code; null to detect it. */
  language: string | null;
  /** Text that guides spelling and style (conditions the first window). */
  prompt: string | null;
  /** 0 decodes greedily; above 0 samples at that temperature. */
  temperature: number;
  wordTimestamps: boolean;
}

export interface TranscriptionSegment {
  id: number;
  /** Offset of the 30-second window the segment was decoded in, in 10 ms frames. */
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avgLogprob: number;
  compressionRatio: number;
  noSpeechProb: number;
}

export interface TranscriptionWord {
  word: string;
  start: number;
  end: number;
}

export interface TranscriptionOutput {
  text: string;
  /** ISO-639-1 code of the spoken (or requested) language. */
  language: string;
  /** Seconds of audio. */
  duration: number;
  segments: TranscriptionSegment[];
  words: TranscriptionWord[] | null;
  /** Input tokens: prompt tokens; output tokens: generated text tokens. */
  usage: TokenUsage;
}

export interface BackendStatus {
  ready: boolean;
  /** What is missing and how to fix it, when not ready; for the operator (may name server paths). */
  detail: string;
  /** The same for API clients, without server paths; `detail` when absent. */
  publicDetail?: string;
  /** The one thing that makes it ready (a command or a sluice.yaml setting), for clients and operators alike. */
  remedy?: string;
  /** The in-process runtime the model needs and this install lacks (e.g. `gguf`); /readyz names it. */
  missingRuntime?: string;
  /**
   * The model's upstream did not answer its last probe: since when (ISO 8601, the first
   * failure after the last success) and why (an error code, no host). It stays `ready`:
   * calls still try the upstream.
   */
  unreachable?: { since: string; reason: string };
  /** An upstream model's engines and their state (ids only: no URL or key). */
  deployments?: DeploymentStatus[];
}

export interface DeploymentStatus {
  id: string;
  state: 'ready' | 'cooling_down' | 'unreachable';
  /** ISO 8601: when a cooldown ends. */
  until?: string;
  /** ISO 8601: since when it has been unreachable, and why (an error code). */
  since?: string;
  reason?: string;
  inFlight: number;
}

export interface InferenceBackend {
  readonly kind: BackendKind;
  /**
   * For an in-process chat runtime: the carried fields it honours beyond sampling (`tools`
   * — tool definitions, tool_choice and tool calls in the conversation — and
   * `response_format`). Requests using any other it cannot honour are refused.
   */
  readonly honours?: ReadonlySet<'tools' | 'response_format'>;
  /** Whether this backend can serve the model now (files present, upstream configured). Cheap; no loading. */
  status(model: ModelSpec): Promise<BackendStatus>;
  chat?(params: ChatParams): Promise<ChatOutput>;
  chatStream?(params: ChatParams): AsyncIterable<ChatStreamEvent>;
  /** Legacy text completions; the last stream event is always `usage`. */
  complete?(params: CompletionParams): Promise<CompletionOutput>;
  completeStream?(params: CompletionParams): AsyncIterable<ChatStreamEvent>;
  runTask?(params: TaskParams): Promise<TaskOutput>;
  embed?(params: EmbeddingParams): Promise<EmbeddingOutput>;
  moderate?(params: ModerationParams): Promise<ModerationOutput>;
  transcribe?(params: TranscriptionParams): Promise<TranscriptionOutput>;
  nextTokenLogprobs?(params: NextTokenParams): Promise<NextTokenOutput>;
  /** Refreshes what status() reports about `models` from outside the process (upstream probes); resolves when done. */
  probe?(models: readonly ModelSpec[]): Promise<void>;
  /** The model's engines and their state now (upstream backends; cheap, no I/O). */
  deployments?(model: ModelSpec): DeploymentStatus[];
  /** Counts tokens with the model's own tokenizer, when the backend has one. */
  countTokens?(model: ModelSpec, text: string): Promise<number>;
  /** Asks the model's engine to count a prompt (its `/tokenize`); null when no engine of it can. */
  tokenize?(model: ModelSpec, prompt: PromptToCount, context: EngineCountContext): Promise<number | null>;
  close(): Promise<void>;
}

/**
 * What an upstream protocol adapter is: the protocol-specific half of a call on one
 * deployment (map the request, send it, map the answer, decode the stream, map the
 * engine's errors, read its usage), and how to probe an engine. The upstream backend
 * (upstream-backend.ts) and its router do the rest for every protocol alike: which
 * deployment, retries, cooldowns, fallbacks (which may cross protocols).
 *
 * A protocol is one folder under protocols/ and one line in protocols.ts. It implements
 * the capabilities it has; a model bound to it is refused on the others.
 */
import type { Logger } from 'pino';
import type { Deployment, ModelSpec } from '../../domain/models/model-spec.types.js';
import type { EngineCountContext, PromptToCount } from '../../domain/models/prompt-count.types.js';
import type {
  ChatOutput,
  ChatParams,
  ChatStreamEvent,
  CompletionOutput,
  CompletionParams,
  EmbeddingOutput,
  EmbeddingParams,
  ModerationOutput,
  ModerationParams,
  TaskOutput,
  TaskParams,
} from '../../domain/models/inference-backend.port.js';
import type { TokenCounter } from '../token-counter.js';

/** Where one attempt goes: the model the router chose (the one asked for, or a fallback) and its deployment. */
export interface UpstreamAttempt {
  model: ModelSpec;
  deployment: Deployment;
}

/** The engine a probe asks. */
export interface ProbeTarget {
  baseUrl: string;
  apiKey: string | null;
}

/**
 * One protocol's adapter. Every call method makes one attempt on one deployment and
 * throws AppError (`upstream`, `upstream_timeout`, …) on failure, which the router
 * classifies to retry elsewhere, cool the deployment down or give up. A stream counts as
 * answered once its first event arrived: fail before it, and the router may retry.
 */
export interface UpstreamProtocol {
  chat?(params: ChatParams, at: UpstreamAttempt): Promise<ChatOutput>;
  /** The answer's chunks, then one `usage` event (counted with the model's tokenizer when the engine reports none). */
  chatStream?(params: ChatParams, at: UpstreamAttempt): AsyncGenerator<ChatStreamEvent>;
  complete?(params: CompletionParams, at: UpstreamAttempt): Promise<CompletionOutput>;
  completeStream?(params: CompletionParams, at: UpstreamAttempt): AsyncGenerator<ChatStreamEvent>;
  runTask?(params: TaskParams, at: UpstreamAttempt): Promise<TaskOutput>;
  embed?(params: EmbeddingParams, at: UpstreamAttempt): Promise<EmbeddingOutput>;
  moderate?(params: ModerationParams, at: UpstreamAttempt): Promise<ModerationOutput>;
  /**
   * Whether the engine answers at all: null when it does, else why not (no hosts, no
   * paths). Cheap and bounded by a short timeout; never called on an inference call.
   * Without it, engines are assumed reachable until a call finds otherwise.
   */
  probe?(target: ProbeTarget): Promise<string | null>;
  /**
   * The prompt's tokens as the deployment's engine counts them (its tokenizer endpoint);
   * null when the engine has none or would not count it. Never throws: a failure is null,
   * and the caller estimates instead.
   */
  tokenize?(prompt: PromptToCount, at: UpstreamAttempt, context: EngineCountContext): Promise<number | null>;
  /**
   * One cheap, authenticated request to one deployment (`sluice providers check`): a
   * models list or a one-token call. null when the deployment answered as it should,
   * else what failed, in words (the key refused, unreachable, no such model); never the
   * key itself.
   */
  check?(at: UpstreamAttempt): Promise<string | null>;
  close(): Promise<void>;
}

/** What a protocol's adapter is built with. */
export interface UpstreamProtocolDeps {
  logger: Logger;
  /** The model's tokenizer (or the estimate), for engines that report no usage. */
  tokens: TokenCounter;
}

/** A protocol as registered: the name `upstream.protocol` gives in sluice.yaml, and its adapter. */
export interface UpstreamProtocolEntry {
  name: string;
  create(deps: UpstreamProtocolDeps): UpstreamProtocol;
}

/** The capabilities an upstream model may have, each a method of its protocol's adapter. */
export type UpstreamCapability = Exclude<keyof UpstreamProtocol, 'probe' | 'check' | 'tokenize' | 'close'>;

/**
 * What the domain asks of the model registry: which model a request names on a route,
 * the backend that serves it with a capability, and how many tokens a text is for it.
 * The registry in src/inference implements it; the domain never sees how backends are
 * built or probed. The model routes (list, readiness) read the wider ModelDirectory.
 */
import type { BackendStatus, InferenceBackend } from './inference-backend.port.js';
import type { ModelRoute, ModelSpec } from './model-spec.types.js';
import type { EngineCountContext, PromptToCount } from './prompt-count.types.js';
import { invalidRequest } from '../shared/errors.js';

/** Where each model route is served: the resolver names them when it refuses a model on a route. */
export const ROUTE_PATHS: Record<ModelRoute, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  embeddings: '/v1/embeddings',
  moderations: '/v1/moderations',
  transcriptions: '/v1/audio/transcriptions',
  translations: '/v1/audio/translations',
  systemone: '/v1/systemone',
};

/** 400 `model_not_found` (param `model`): what the resolver throws for a model it does not know. */
export const modelNotFound = (id: string) =>
  invalidRequest(`The model \`${id}\` does not exist or you do not have access to it.`, 'model', 'model_not_found');

/** The optional calls of InferenceBackend a model can be asked to serve. */
export type Capability = 'chat' | 'chatStream' | 'complete' | 'completeStream' | 'runTask' | 'embed' | 'moderate' | 'transcribe' | 'nextTokenLogprobs';

export interface TokenCount {
  tokens: number;
  /** True when a real tokenizer counted; false for the byte estimate. */
  exact: boolean;
}

export interface ModelResolver {
  /**
   * The model for `name`, or undefined: a model id, else an exact alias, else the first
   * glob alias that matches (all case-insensitively).
   */
  find(name: string): ModelSpec | undefined;
  /** True when `name` reaches a model only through an alias (the answer then names `name`, not the model). */
  isAlias(name: string): boolean;
  /**
   * The model named by a request on `route`; throws 400 `model_not_found` (param `model`)
   * when it is unknown or not served on that route.
   */
  require(name: string, route: ModelRoute): ModelSpec;
  /** The backend that serves `model` with `capability`; throws 503 `model_not_available` when there is none. */
  backendFor(model: ModelSpec, capability: Capability): Promise<InferenceBackend>;
  /** Tokens of `text` for `model`: its own tokenizer when it has one, else the estimate. */
  countTokens(model: ModelSpec, text: string): Promise<TokenCount>;
  /** `prompt` counted by `model`'s engine (its `/tokenize`), or null when none of its engines can. Never throws. */
  engineTokens(model: ModelSpec, prompt: PromptToCount, context: EngineCountContext): Promise<number | null>;
}

/** A model's readiness, with what serves it: its upstream's protocol (e.g. `openai`), or the in-process runtime. */
export interface ModelStatus extends BackendStatus {
  backend: string;
}

/** An alias as configured: an exact name, or a glob pattern (`*`, `?`). */
export interface ModelAlias {
  pattern: string;
  model: ModelSpec;
  glob: boolean;
}

/** The resolver plus what the model listing routes read: every model, and whether each can run now. */
export interface ModelDirectory extends ModelResolver {
  /** Every model: the catalog's in catalog order, then those declared in sluice.yaml. */
  list(): ModelSpec[];
  /** Every alias: the exact ones, then the globs in the order they are tried. */
  aliases(): readonly ModelAlias[];
  /** Whether the model can run now, and if not, what to do about it. */
  status(model: ModelSpec): Promise<ModelStatus>;
  /** Probes the upstreams of `models` (default: all) whose findings are stale; status() then reports them. */
  refreshUpstreams(models?: readonly ModelSpec[]): Promise<void>;
}

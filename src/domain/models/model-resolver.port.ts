/**
 * What the domain asks of the model registry: which model a request names on a route,
 * the backend that serves it with a capability, and how many tokens a text is for it.
 * The registry in src/inference implements it; the domain never sees how backends are
 * built or probed.
 */
import type { InferenceBackend } from './inference-backend.port.js';
import type { ModelRoute, ModelSpec } from './model-spec.types.js';

/** The optional calls of InferenceBackend a model can be asked to serve. */
export type Capability = 'chat' | 'chatStream' | 'runTask' | 'embed' | 'moderate' | 'transcribe' | 'nextTokenLogprobs';

export interface TokenCount {
  tokens: number;
  /** True when a real tokenizer counted; false for the byte estimate. */
  exact: boolean;
}

export interface ModelResolver {
  /** The model for `name` (ids are matched case-insensitively), or undefined. */
  find(name: string): ModelSpec | undefined;
  /**
   * The model named by a request on `route`; throws 400 `model_not_found` (param `model`)
   * when it is unknown or not served on that route.
   */
  require(name: string, route: ModelRoute): ModelSpec;
  /** The backend that serves `model` with `capability`; throws 503 `model_not_available` when there is none. */
  backendFor(model: ModelSpec, capability: Capability): Promise<InferenceBackend>;
  /** Tokens of `text` for `model`: its own tokenizer when it has one, else the estimate. */
  countTokens(model: ModelSpec, text: string): Promise<TokenCount>;
}

/**
 * What the domain knows of a model: its catalog entry (task, routes, limits, default
 * prices, where its weights come from), the price and limits in force, and the binding
 * to the runtime that serves it. The config builds one per model (catalog defaults with
 * sluice.yaml's overrides); the domain and the inference adapters pass it around.
 */
import type { TokenPrice } from '../shared/money.js';

export type ModelTask =
  | 'chat'
  | 'classification'
  | 'extraction'
  | 'summarization'
  | 'moderation'
  | 'embeddings'
  | 'transcription';

export type ModelRoute = 'chat' | 'responses' | 'embeddings' | 'moderations' | 'transcriptions' | 'translations' | 'systemone';

/** The in-process runtimes: every model not served by one is served by an upstream. */
export const RUNTIME_KINDS = ['onnx', 'gguf'] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

/** The one union of backend kinds: an upstream (whatever protocol it speaks) or an in-process runtime. */
export type BackendKind = 'upstream' | RuntimeKind;

/**
 * The protocol of an upstream that sluice.yaml binds without naming one (`base_url`,
 * `deployments`, and `backend: openai`, which names it as a backend).
 */
export const DEFAULT_UPSTREAM_PROTOCOL = 'openai';

export interface CatalogEntry {
  id: string;
  task: ModelTask;
  routes: readonly ModelRoute[];
  /** Maximum input tokens (the catalog's "max tokens"). */
  contextLength: number;
  /** Inputs beyond the limit are truncated instead of refused. */
  truncatesInput: boolean;
  inputPerMillionUsd: number;
  outputPerMillionUsd: number;
  /** What serves the model when sluice.yaml binds it to nothing: an in-process runtime, or `upstream` (then it needs one configured). */
  defaultBackend: BackendKind;
  /** Hugging Face Hub repository `sluice models pull` fetches, when the model runs in-process. */
  hubRepo: string | null;
  /** The `model` string the response carries, when it differs from the id. */
  responseModel?: string;
  /** Native vector length of an embedding model. */
  embeddingDimensions?: number;
}

/** The upstream a model is bound to: the protocol its engines speak and the engines. */
export interface UpstreamBinding {
  /** A registered upstream protocol's name (`openai` unless sluice.yaml's `upstream.protocol` names another). */
  protocol: string;
  deployments: readonly Deployment[];
}

export interface ModelBinding {
  backend: BackendKind;
  /** Set exactly when backend is `upstream`: ask this, not the kind, whether a model is an upstream's. */
  upstream: UpstreamBinding | null;
  baseUrl: string | null;
  upstreamModel: string | null;
  /** The resolved secret from `api_key_env`; never logged. */
  apiKey: string | null;
  timeoutMs: number;
  /** Request fields dropped before the call reaches the upstream (`drop_params`). */
  dropParams: readonly string[];
  /** `drop_params: true`: fields the model's protocol cannot carry are dropped instead of refused with 400. */
  dropUnsupported?: boolean;
  /** Directory of the model's files for in-process runtimes. */
  path: string | null;
  /** The engines that serve the model (its upstream's deployments); `base_url` is one of them. Empty: none configured, or in-process. */
  deployments: readonly Deployment[];
}

/** One engine that serves an upstream model, as the operator configured it. */
export interface Deployment {
  /** Operator-facing id (metrics, cooldowns, usage records); never a URL. */
  id: string;
  baseUrl: string;
  /** The cloud region of a deployment whose protocol has regions (bedrock); else null. */
  region: string | null;
  upstreamModel: string | null;
  /** The resolved secret from `api_key_env`; never logged. */
  apiKey: string | null;
  weight: number;
  /** null: no limit. */
  maxConcurrency: number | null;
  timeoutMs: number;
  /** The hosted provider this deployment reaches (`provider:` in sluice.yaml: anthropic, groq, azure, …); absent for a self-hosted engine. */
  provider?: string;
  /** `bearer`: the key is a bearer token (Azure's Entra tokens) instead of the protocol's own key header. */
  auth?: 'key' | 'bearer';
  /** Azure's classic deployment form: the `api-version` query (absent: the v1 API). */
  apiVersion?: string;
  /** `anthropic-beta` flags sent on every call to this deployment. */
  betas?: readonly string[];
}

export interface ModelSpec {
  id: string;
  entry: CatalogEntry;
  price: TokenPrice;
  contextLength: number;
  /** The output cap assumed when a request sets none (the credit reservation's estimate). */
  maxOutputTokens: number;
  binding: ModelBinding;
  /** Other exact names requests may give it (`models.<id>.aliases`); the top-level glob aliases are the registry's. */
  aliases: readonly string[];
  /** Declared in sluice.yaml (an id outside the catalog, or a catalog id given a `kind`), not a catalog default. */
  declared: boolean;
  /** Models tried in order when every deployment failed or is cooling down. */
  fallbacks: readonly string[];
  /** Models tried in order when the engine says the input is too long for it. */
  contextWindowFallbacks: readonly string[];
  /** Session affinity for this model: null off, absent the `routing.affinity` default. */
  affinity?: AffinitySettings | null;
}

/** What keys a session for session affinity, in order of preference (the first a request carries). */
export type AffinityKeyKind = 'prompt_cache_key' | 'session_header' | 'previous_response' | 'user' | 'prefix';

/** Session affinity (src/inference/routing/affinity.ts): a session's turns go to the engine that holds its prefix cache. */
export interface AffinitySettings {
  keys: readonly AffinityKeyKind[];
  /** `prefix`: how many characters of the prompt key the session. */
  prefixChars: number;
  /** A deployment takes a pinned call while its calls in flight stay under this many times its weighted share. */
  loadFactor: number;
  /** How long a pin lasts after the session's last turn. */
  ttlMs: number;
}

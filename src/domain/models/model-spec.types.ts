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

export type BackendKind = 'openai' | 'onnx' | 'gguf';

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
  /** The runtime that serves the model in-process when no upstream is configured. */
  defaultBackend: BackendKind;
  /** Hugging Face Hub repository `sluice models pull` fetches, when the model runs in-process. */
  hubRepo: string | null;
  /** The `model` string the response carries, when it differs from the id. */
  responseModel?: string;
  /** Native vector length of an embedding model. */
  embeddingDimensions?: number;
}

export interface ModelBinding {
  backend: BackendKind;
  baseUrl: string | null;
  upstreamModel: string | null;
  /** The resolved secret from `api_key_env`; never logged. */
  apiKey: string | null;
  timeoutMs: number;
  /** Request fields dropped before the call reaches the upstream (`drop_params`). */
  dropParams: readonly string[];
  /** Directory of the model's files for in-process runtimes. */
  path: string | null;
  /** The engines that serve the model (backend openai); `base_url` is one of them. Empty: none configured. */
  deployments: readonly Deployment[];
}

/** One engine that serves an upstream model, as the operator configured it. */
export interface Deployment {
  /** Operator-facing id (metrics, cooldowns, usage records); never a URL. */
  id: string;
  baseUrl: string;
  upstreamModel: string | null;
  /** The resolved secret from `api_key_env`; never logged. */
  apiKey: string | null;
  weight: number;
  /** null: no limit. */
  maxConcurrency: number | null;
  timeoutMs: number;
}

export interface ModelSpec {
  id: string;
  entry: CatalogEntry;
  price: TokenPrice;
  contextLength: number;
  /** The output cap assumed when a request sets none (the credit reservation's estimate). */
  maxOutputTokens: number;
  binding: ModelBinding;
  /** Declared in sluice.yaml (an id outside the catalog, or a catalog id given a `kind`), not a catalog default. */
  declared: boolean;
  /** Models tried in order when every deployment failed or is cooling down. */
  fallbacks: readonly string[];
  /** Models tried in order when the engine says the input is too long for it. */
  contextWindowFallbacks: readonly string[];
}

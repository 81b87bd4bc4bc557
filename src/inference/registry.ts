/**
 * The model registry: model id → its configuration and the backend instance that serves
 * it, built from the config (`models.<id>.backend`, `upstream`). It owns the routing rules
 * (which model answers on which route) and the "why can't this model run" messages.
 *
 * Backends register in BACKEND_FACTORIES, one line per kind: the upstream backend (every
 * protocol in UPSTREAM_PROTOCOLS) and the in-process runtimes. One instance per kind is
 * created lazily and shared by all of its models.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { BackendKind, ModelRoute, ModelSpec } from '../domain/models/model-spec.types.js';
import type { InferenceBackend } from '../domain/models/inference-backend.port.js';
import type { EngineCountContext, PromptToCount } from '../domain/models/prompt-count.types.js';
import {
  modelNotFound,
  ROUTE_PATHS,
  type Capability,
  type ModelAlias,
  type ModelDirectory,
  type ModelStatus,
  type TokenCount,
} from '../domain/models/model-resolver.port.js';
import { AliasTable } from './alias-table.js';
import { AppError, invalidRequest } from '../domain/shared/errors.js';
import { TokenCounter } from './token-counter.js';
import type { BackendFactory } from './backend-deps.js';
import { createUpstreamBackend } from './upstream/upstream-backend.js';
import type { UpstreamProtocolEntry } from './upstream/protocol.js';
import { UPSTREAM_PROTOCOLS } from './upstream/protocols.js';
import { createOnnxBackend } from './backends/onnx/index.js';
import { createGgufBackend } from './backends/gguf/index.js';

/** The kinds this build can run. Add an in-process runtime with one line here (an upstream protocol: upstream/protocols.ts). */
export const BACKEND_FACTORIES: Partial<Record<BackendKind, BackendFactory>> = {
  upstream: createUpstreamBackend,
  onnx: createOnnxBackend,
  gguf: createGgufBackend,
};

export interface RegistryOptions {
  factories?: Partial<Record<BackendKind, BackendFactory>>;
  /** The protocols upstream models may speak (default: this build's, UPSTREAM_PROTOCOLS). */
  protocols?: readonly UpstreamProtocolEntry[];
}

/** Readiness is cheap but not free; remember it briefly on the hot path. */
const READY_TTL_MS = 5_000;
const NOT_READY_TTL_MS = 1_000;

export class ModelRegistry implements ModelDirectory {
  readonly tokens = new TokenCounter();
  readonly #byName = new Map<string, ModelSpec>();
  readonly #aliases: AliasTable;
  readonly #backends = new Map<BackendKind, InferenceBackend>();
  readonly #status = new Map<string, { status: ModelStatus; expiresAtMs: number }>();

  readonly #factories: Partial<Record<BackendKind, BackendFactory>>;
  readonly #protocols: readonly UpstreamProtocolEntry[];

  /** Throws when a model is bound to a protocol this build does not speak (a start-up fault, with the known ones). */
  constructor(
    private readonly config: Readonly<Config>,
    private readonly logger: Logger,
    options: RegistryOptions = {},
  ) {
    this.#factories = options.factories ?? BACKEND_FACTORIES;
    this.#protocols = options.protocols ?? UPSTREAM_PROTOCOLS;
    checkProtocols(Object.values(config.models), this.#protocols);
    for (const model of Object.values(config.models)) this.#byName.set(model.id.toLowerCase(), model);
    // A response-name alias (all-MiniLM-L6-v2) never hides a model declared under that id.
    for (const model of Object.values(config.models)) {
      const alias = model.entry.responseModel?.toLowerCase();
      if (alias && !this.#byName.has(alias)) this.#byName.set(alias, model);
    }
    this.#aliases = new AliasTable(config.aliases.entries, (id) => config.models[id]!);
  }

  /** Every model: the catalog's in catalog order, then those declared in sluice.yaml. */
  list(): ModelSpec[] {
    return Object.values(this.config.models);
  }

  /** Every alias: the exact ones, then the globs in the order they are tried. */
  aliases(): readonly ModelAlias[] {
    return this.#aliases.list;
  }

  /** The model for `name`: an id, else an exact alias, else the first glob that matches (case-insensitively); or undefined. */
  find(name: string): ModelSpec | undefined {
    // Only the Map: `name` comes from requests (`constructor`, `__proto__` are not models).
    const lower = name.toLowerCase();
    return this.#byName.get(lower) ?? this.#aliases.find(lower);
  }

  /** True when `name` reaches a model only through an alias. */
  isAlias(name: string): boolean {
    const lower = name.toLowerCase();
    return !this.#byName.has(lower) && this.#aliases.find(lower) !== undefined;
  }

  /**
   * The model named by a request on `route`; throws 400 `model_not_found` (param `model`)
   * when it is unknown or not served on that route.
   */
  require(name: string, route: ModelRoute): ModelSpec {
    const model = this.find(name);
    if (!model) throw modelNotFound(name);
    if (!model.entry.routes.includes(route)) {
      const servedOn = model.entry.routes.filter((r) => r !== 'systemone').map((r) => ROUTE_PATHS[r]);
      throw invalidRequest(
        `Model ${model.id} is not supported on ${ROUTE_PATHS[route]}; it is served on ${servedOn.join(' and ')}`,
        'model',
        'model_not_found',
      );
    }
    return model;
  }

  /** The backend that serves `model` with `capability`; throws 503 `model_not_available` when there is none. */
  backendFor(model: ModelSpec, capability: Capability): Promise<InferenceBackend> {
    const cached = this.#status.get(model.id);
    // A model known to be ready (every request after the first): no probe, no await.
    if (cached?.status.ready && cached.expiresAtMs > Date.now()) {
      try {
        return Promise.resolve(this.#capable(model, capability));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    return this.status(model).then((status) => {
      if (!status.ready) throw notAvailable(model, status.publicDetail ?? status.detail, status.remedy);
      return this.#capable(model, capability);
    });
  }

  #capable(model: ModelSpec, capability: Capability): InferenceBackend {
    const backend = this.#backend(model.binding.backend)!;
    if (typeof backend[capability] !== 'function') {
      const remedy =
        model.binding.backend === model.entry.defaultBackend
          ? 'this build has no runtime for it'
          : `remove models.${model.id}.backend and base_url from sluice.yaml to run it on its default runtime, ${model.entry.defaultBackend}`;
      const servedBy = model.binding.upstream?.protocol ?? backend.kind;
      throw notAvailable(model, `the ${servedBy} backend cannot serve ${model.entry.task} models (${capability})`, remedy);
    }
    return backend;
  }

  /** Whether the model can run now, and if not, what to do about it. */
  async status(model: ModelSpec): Promise<ModelStatus> {
    const cached = this.#status.get(model.id);
    const now = Date.now();
    if (cached && cached.expiresAtMs > now) return this.#withDeployments(model, cached.status);
    const status = await this.#probe(model);
    // The operator's view, paths included; API clients get publicDetail. Logged when the
    // finding changes, not at every probe (/readyz asks for in-process models on every poll).
    if (!status.ready && cached?.status.detail !== status.detail) this.logger.info({ model: model.id, detail: status.detail }, 'model not available');
    this.#status.set(model.id, { status, expiresAtMs: now + (status.ready ? READY_TTL_MS : NOT_READY_TTL_MS) });
    return status;
  }

  /** A cached status with its deployments' state as of now (cooldowns start and end between probes). */
  #withDeployments(model: ModelSpec, status: ModelStatus): ModelStatus {
    const deployments = status.deployments && this.#backends.get(model.binding.backend)?.deployments?.(model);
    return deployments ? { ...status, deployments } : status;
  }

  /**
   * Probes the upstreams of `models` (default: all) whose findings are stale and resolves
   * when done; status() then reports what they found. Never called on an inference call.
   */
  async refreshUpstreams(models: readonly ModelSpec[] = this.list()): Promise<void> {
    const upstream = models.filter((m) => m.binding.upstream && m.binding.baseUrl);
    if (upstream.length === 0) return;
    await this.#backend('upstream')?.probe?.(upstream);
    for (const m of upstream) this.#status.delete(m.id);
  }

  /** Tokens of `text` for `model`: its backend's own counter, else its tokenizer.json, else the estimate. */
  async countTokens(model: ModelSpec, text: string): Promise<TokenCount> {
    const backend = this.#backend(model.binding.backend);
    if (backend?.countTokens) {
      try {
        return { tokens: await backend.countTokens(model, text), exact: true };
      } catch (err) {
        this.logger.warn({ err, model: model.id }, 'backend token counter failed; using the tokenizer file or estimate');
      }
    }
    return this.tokens.count(model, text);
  }

  /** `prompt` counted by `model`'s engine (its `/tokenize`), or null when it has none that can. */
  async engineTokens(model: ModelSpec, prompt: PromptToCount, context: EngineCountContext): Promise<number | null> {
    if (!model.binding.upstream) return null;
    return (await this.#backend(model.binding.backend)?.tokenize?.(model, prompt, context)) ?? null;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#backends.values()].map((b) => b.close()));
    this.#backends.clear();
  }

  async #probe(model: ModelSpec): Promise<ModelStatus> {
    const kind = model.binding.upstream?.protocol ?? model.binding.backend;
    const backend = this.#backend(model.binding.backend);
    if (!backend) {
      return {
        backend: kind,
        ready: false,
        detail: `the ${kind} runtime is not available in this build`,
        remedy: `set models.${model.id}.base_url in sluice.yaml to an OpenAI-compatible server that serves it`,
      };
    }
    try {
      return { backend: kind, ...(await backend.status(model)) };
    } catch (err) {
      this.logger.warn({ err, model: model.id }, 'backend status check failed');
      return {
        backend: kind,
        ready: false,
        detail: `status check failed: ${(err as Error).message}`,
        publicDetail: 'its status check failed',
        remedy: 'the server log says why',
      };
    }
  }

  #backend(kind: BackendKind): InferenceBackend | undefined {
    let backend = this.#backends.get(kind);
    if (!backend) {
      const factory = this.#factories[kind];
      if (!factory) return undefined;
      backend = factory({ config: this.config, logger: this.logger.child({ backend: kind }), tokens: this.tokens, protocols: this.#protocols });
      this.#backends.set(kind, backend);
    }
    return backend;
  }
}

/** What fixes a model whose backend gave no remedy of its own: pull its files, or point it at an upstream. */
function defaultRemedy(model: ModelSpec): string {
  if (!model.binding.upstream && model.entry.hubRepo) return `run \`sluice models pull ${model.id}\``;
  return `set models.${model.id}.base_url in sluice.yaml to an OpenAI-compatible server and restart`;
}

/** Every upstream model's protocol is one of `protocols`; else the error names the model and the known ones. */
function checkProtocols(models: readonly ModelSpec[], protocols: readonly UpstreamProtocolEntry[]): void {
  const known = new Set(protocols.map((p) => p.name));
  const unknown = models.filter((m) => m.binding.upstream && !known.has(m.binding.upstream.protocol));
  if (unknown.length === 0) return;
  const lines = unknown.map((m) => `models.${m.id}.upstream.protocol: unknown protocol ${m.binding.upstream!.protocol}`);
  throw new Error(`${lines.join('; ')} (known protocols: ${[...known].join(', ')})`);
}

/** 503 `model_not_available`: the state, then the one remedy. A configuration fault, not a server fault. */
function notAvailable(model: ModelSpec, detail: string, remedy = defaultRemedy(model)): AppError {
  return new AppError('unavailable', `Model ${model.id} is not available: ${detail}; ${remedy}`, {
    code: 'model_not_available',
    param: 'model',
  });
}

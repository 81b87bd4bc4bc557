/**
 * The `onnx` backend: ONNX models in the Hugging Face Hub layout, run in process by
 * ONNX Runtime on a worker thread. Each model is loaded on first use, once, shared by
 * every call, and released after `runtimes.idle_unload_seconds` without use.
 */
import type { Logger } from 'pino';
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import type { RuntimesConfig } from '../../../config/schema.js';
import type { BackendStatus, EmbeddingOutput, EmbeddingParams, InferenceBackend, ModerationOutput, ModerationParams, TaskOutput, TaskParams, TranscriptionOutput, TranscriptionParams } from '../../../domain/models/inference-backend.port.js';
import type { BackendDeps } from '../../backend-deps.js';
import { OrtRuntime } from '../../runtime/ort-runtime.js';
import { LazyResource } from '../../runtime/lazy-resource.js';
import type { BatcherStats } from '../../runtime/dynamic-batcher.js';
import { modelFilesMissing, noRuntimeFor, throwIfAborted, toOnnxError } from './errors.js';
import { missingFiles } from './loader.js';
import { ENGINE_KINDS, loadEngine, requiredFiles, type Engine, type EngineKind } from './engines.js';
import { PackHost } from './packs.js';
import { isPackModel } from '../../classifier/manifest.js';
import { classifyIab, moderateTexts, packText } from '../../classifier/classify.js';
import type { ClassifierPack, PackScores } from '../../classifier/pack.js';

/** Hooks the composition root wires to metrics. */
export interface OnnxObservers {
  /** Every embedding runtime call, with its number of inputs. */
  onEmbeddingBatch?: (model: string, size: number) => void;
}

export function createOnnxBackend(deps: BackendDeps, observers: OnnxObservers = {}): InferenceBackend {
  return new OnnxBackend(deps.config.runtimes, deps.logger, observers, deps.config.models);
}

export class OnnxBackend implements InferenceBackend {
  readonly kind = 'onnx' as const;
  readonly runtime: OrtRuntime;
  readonly #models = new Map<string, LazyResource<Engine>>();
  /** Loaded engines by model id (for batching statistics). */
  readonly #engines = new Map<string, Engine>();
  /** The zlm-* classifier packs, which run on an embedding model of this backend. */
  readonly packs: PackHost;

  constructor(
    private readonly options: RuntimesConfig,
    private readonly logger: Logger,
    private readonly observers: OnnxObservers = {},
    models: Readonly<Record<string, ModelSpec>> = {},
  ) {
    this.runtime = new OrtRuntime(options.onnxThreads ? { intraOpThreads: options.onnxThreads } : {});
    this.packs = new PackHost(
      models,
      (backbone, texts, signal) => this.#use(backbone, signal, 'embeddings', (engine) => engine.embed(texts)),
      logger,
    );
  }

  async status(model: ModelSpec): Promise<BackendStatus> {
    if (isPackModel(model.id)) return this.packs.status(model);
    const kind = ENGINE_KINDS[model.id];
    if (!kind) {
      return {
        ready: false,
        detail: `the onnx runtime has no implementation for ${model.id}`,
        remedy: `remove models.${model.id}.backend from sluice.yaml to run it on its default runtime, ${model.entry.defaultBackend}`,
      };
    }
    const dir = model.binding.path;
    if (!dir) return { ready: false, detail: 'no model directory configured' };
    const req = requiredFiles(kind);
    const missing = await missingFiles(dir, req.files, req.graphs);
    if (missing.length > 0) {
      const files = missing.join(', ');
      return {
        ready: false,
        detail: `missing in ${dir}: ${files}`,
        publicDetail: `missing from its model directory: ${files}`,
        remedy: `run \`sluice models pull ${model.id}\``,
      };
    }
    return { ready: true, detail: `onnx ${kind} model in ${dir}` };
  }

  async embed(params: EmbeddingParams): Promise<EmbeddingOutput> {
    return this.#use(params.model, params.signal, 'embeddings', async (engine) => {
      const { vectors, tokens } = await engine.embed(params.inputs);
      return { vectors, usage: { inputTokens: tokens, outputTokens: 0 } };
    });
  }

  async runTask(params: TaskParams): Promise<TaskOutput> {
    if (isPackModel(params.model.id)) {
      const pack = await this.#pack(params.model, params.signal);
      if (pack.manifest.kind === 'moderation') throw noRuntimeFor(params.model.id);
      const { result, tokens } = await classifyIab(pack, params.input, params.signal);
      return { result, usage: { inputTokens: tokens, outputTokens: 0 } };
    }
    const kind = ENGINE_KINDS[params.model.id];
    if (!kind || kind === 'embeddings' || kind === 'whisper') throw noRuntimeFor(params.model.id);
    return this.#use(params.model, params.signal, kind, (engine) => engine.runTask(params));
  }

  async moderate(params: ModerationParams): Promise<ModerationOutput> {
    const pack = await this.#pack(params.model, params.signal);
    if (pack.manifest.kind !== 'moderation') throw noRuntimeFor(params.model.id);
    const { result, tokens } = await moderateTexts(pack, params.inputs, params.signal);
    return { results: result, usage: { inputTokens: tokens, outputTokens: 0 } };
  }

  /**
   * Per-label probabilities of `text` under every label set of a pack (calibrated, rolled
   * up), with the label sets' trees: the in-process API the decision route reads. Look a
   * label up with `findLabel(scores.sets.get(set).set, nameOrPath)`; `freeLabels`, labels
   * outside the pack, are scored zero-shot on the same embedding (`free`, in their order).
   */
  async scorePack(model: ModelSpec, text: string, signal?: AbortSignal, freeLabels: readonly string[] = []): Promise<PackScores & { free: Float32Array }> {
    const pack = await this.#pack(model, signal);
    const scores = await pack.score(packText(pack, text), signal);
    return { ...scores, free: await pack.scoreFreeLabels(scores.vector, freeLabels, signal) };
  }

  /** The loaded classifier pack of `model` (the decision route reads its label sets, scores and backbone). */
  async decisionPack(model: ModelSpec, signal?: AbortSignal): Promise<ClassifierPack> {
    return this.#pack(model, signal);
  }

  /** Entailment and contradiction logits of `premise` against each hypothesis on an NLI model (the decision route's `nli` scorer). */
  async nliPairs(model: ModelSpec, premise: string, hypotheses: readonly string[], signal?: AbortSignal): Promise<Array<{ entailment: number; contradiction: number }>> {
    return this.#use(model, signal, 'zero-shot', async (engine) => {
      if (!engine.pairLogits) throw noRuntimeFor(model.id);
      return engine.pairLogits(premise, hypotheses);
    });
  }

  async transcribe(params: TranscriptionParams): Promise<TranscriptionOutput> {
    return this.#use(params.model, params.signal, 'whisper', (engine) => engine.transcribe(params));
  }

  async countTokens(model: ModelSpec, text: string): Promise<number> {
    if (isPackModel(model.id)) {
      const pack = await this.#pack(model, undefined);
      return pack.backbone.countTokens(packText(pack, text));
    }
    return this.#use(model, undefined, null, async (engine) => engine.countTokens(text));
  }

  /** Batching counters of a loaded embedding model (runtime calls vs inputs), for tests and benchmarks. */
  batchStats(modelId: string): BatcherStats | null {
    return this.#engines.get(modelId)?.batchStats ?? null;
  }

  async #pack(model: ModelSpec, signal: AbortSignal | undefined) {
    if (signal) throwIfAborted(signal);
    if (!isPackModel(model.id)) throw noRuntimeFor(model.id);
    try {
      return await this.packs.pack(model);
    } catch (err) {
      const appError = toOnnxError(err, model.id);
      if (appError.kind === 'internal') this.logger.error({ err, model: model.id }, 'classifier pack failed to load');
      throw appError;
    }
  }

  async close(): Promise<void> {
    await this.packs.forget();
    await Promise.allSettled([...this.#models.values()].map((m) => m.close()));
    this.#models.clear();
    await this.runtime.close();
  }

  async #use<R>(model: ModelSpec, signal: AbortSignal | undefined, expected: EngineKind | null, fn: (e: Engine) => Promise<R>): Promise<R> {
    if (signal) throwIfAborted(signal);
    const kind = ENGINE_KINDS[model.id];
    if (!kind || (expected && kind !== expected)) throw noRuntimeFor(model.id);
    try {
      return await this.#resource(model, kind).use(fn);
    } catch (err) {
      const appError = toOnnxError(err, model.id);
      if (appError.kind === 'internal') this.logger.error({ err, model: model.id }, 'onnx inference failed');
      throw appError;
    }
  }

  #resource(model: ModelSpec, kind: EngineKind): LazyResource<Engine> {
    // A pack may name a backbone directory of its own: one resource per id and directory.
    const key = `${model.id}\0${model.binding.path ?? ''}`;
    let resource = this.#models.get(key);
    if (resource) return resource;
    const dir = model.binding.path ?? '';
    resource = new LazyResource<Engine>({
      load: async () => {
        const req = requiredFiles(kind);
        const missing = await missingFiles(dir, req.files, req.graphs);
        if (missing.length > 0) throw modelFilesMissing(model.id, missing);
        const started = Date.now();
        const engine = await loadEngine(kind, { runtime: this.runtime, dir, model, options: this.options, ...this.observers });
        this.#engines.set(model.id, engine);
        this.logger.info({ model: model.id, ms: Date.now() - started }, 'model loaded');
        return engine;
      },
      unload: async (engine) => {
        this.#engines.delete(model.id);
        await engine.close();
        this.logger.info({ model: model.id }, 'model unloaded');
      },
      idleMs: this.options.idleUnloadSeconds * 1000,
    });
    this.#models.set(key, resource);
    return resource;
  }
}

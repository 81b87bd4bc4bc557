/**
 * The `gguf` backend: GGUF chat models run in process by llama.cpp (node-llama-cpp's
 * prebuilt binary, installed on demand into `runtimes.dir` by `sluice runtimes add gguf`),
 * each with its own chat template, streaming, and the reasoning of thinking models kept
 * apart from the answer. Models load on first use, once, and are released after
 * `runtimes.idle_unload_seconds` without use.
 */
import type { Logger } from 'pino';
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import type { RuntimesConfig } from '../../../config/schema.js';
import type { BackendStatus, ChatOutput, ChatParams, ChatStreamEvent, InferenceBackend, NextTokenOutput, NextTokenParams } from '../../../domain/models/inference-backend.port.js';
import type { BackendDeps } from '../../backend-deps.js';
import { LazyResource } from '../../runtime/lazy-resource.js';
import { findGguf, GgufModel, sharedLlama } from './loader.js';
import { generateChat } from './generate.js';
import { nextTokenLogprobs } from './next-token.js';
import { cancelled, ggufFileMissing, ggufRuntimeMissing, toGgufError } from './errors.js';
import type { NodeLlamaCpp } from './llama-api.js';
import { ADD_GGUF_COMMAND, ggufRuntimeState, loadGgufRuntime } from './runtime.js';

/** Requests a model decodes side by side (llama.cpp batches their tokens together). */
const SEQUENCES = 2;

export function createGgufBackend(deps: BackendDeps): InferenceBackend {
  return new GgufBackend(deps.config.runtimes, deps.logger);
}

export class GgufBackend implements InferenceBackend {
  readonly kind = 'gguf' as const;
  /** Tools (required or a named function through grammars, auto through function calling) and response formats (structured.ts, functions.ts). */
  readonly honours: ReadonlySet<'tools' | 'response_format'> = new Set(['tools', 'response_format'] as const);
  readonly #models = new Map<string, LazyResource<GgufModel>>();
  /** Set once a model has loaded: generation needs the module's classes, not only the models. */
  #runtime: NodeLlamaCpp | null = null;

  constructor(
    private readonly options: RuntimesConfig,
    private readonly logger: Logger,
  ) {}

  async status(model: ModelSpec): Promise<BackendStatus> {
    const where = model.binding.path;
    if (!where) return { ready: false, detail: 'no model path configured' };
    const file = await findGguf(where);
    if (!file) {
      return {
        ready: false,
        detail: `no .gguf file in ${where}`,
        publicDetail: 'no .gguf file in its model directory',
        remedy: `run \`sluice models pull ${model.id}\``,
      };
    }
    // The model's file comes first: `sluice models pull` offers to install the runtime too.
    const runtime = await ggufRuntimeState(this.options.dir);
    if (!runtime.installed) {
      return { ready: false, detail: runtime.detail, publicDetail: runtime.publicDetail, remedy: `run \`${ADD_GGUF_COMMAND}\``, missingRuntime: 'gguf' };
    }
    return { ready: true, detail: `gguf model ${file}` };
  }

  async chat(params: ChatParams): Promise<ChatOutput> {
    return this.#use(params, (m) => generateChat(this.#runtime!, m, params));
  }

  async *chatStream(params: ChatParams): AsyncGenerator<ChatStreamEvent> {
    const queue: ChatStreamEvent[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let failure: unknown = null;
    const push = (event: ChatStreamEvent) => {
      queue.push(event);
      wake?.();
    };
    const run = this.#use(params, (m) => generateChat(this.#runtime!, m, params, (d) => push({ type: 'delta', ...d })))
      .then((out) => {
        push({ type: 'finish', finishReason: out.finishReason });
        push({ type: 'usage', usage: out.usage });
      })
      .catch((err: unknown) => (failure = err))
      .finally(() => {
        done = true;
        wake?.();
      });
    try {
      while (!done || queue.length > 0) {
        if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        while (queue.length > 0) yield queue.shift()!;
      }
      if (failure) throw failure;
    } finally {
      await run;
    }
  }

  /** The candidates' probabilities as the next token (each must be one token). */
  async nextTokenLogprobs(params: NextTokenParams): Promise<NextTokenOutput> {
    return this.#use(params, (m) => nextTokenLogprobs(m, params));
  }

  async countTokens(model: ModelSpec, text: string): Promise<number> {
    return this.#resource(model).use(async (m) => m.model.tokenize(text, false).length);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#models.values()].map((m) => m.close()));
    this.#models.clear();
  }

  async #use<R>(params: { model: ModelSpec; signal: AbortSignal }, fn: (m: GgufModel) => Promise<R>): Promise<R> {
    if (params.signal.aborted) throw cancelled();
    try {
      return await this.#resource(params.model).use(fn);
    } catch (err) {
      const appError = toGgufError(err, params.model.id, params.signal);
      if (appError.kind === 'internal') this.logger.error({ err, model: params.model.id }, 'gguf inference failed');
      throw appError;
    }
  }

  #resource(model: ModelSpec): LazyResource<GgufModel> {
    let resource = this.#models.get(model.id);
    if (resource) return resource;
    const where = model.binding.path ?? '';
    resource = new LazyResource<GgufModel>({
      load: async () => {
        const file = await findGguf(where);
        if (!file) throw ggufFileMissing(model.id);
        const runtime = await loadGgufRuntime(this.options.dir);
        if (!runtime) throw ggufRuntimeMissing(model.id);
        this.#runtime = runtime.module;
        const started = Date.now();
        const llama = await sharedLlama(runtime.module, runtime.gpu, this.logger);
        const loaded = await GgufModel.load(llama, file, {
          contextSize: this.options.ggufContextSize,
          threads: this.options.ggufThreads,
          sequences: SEQUENCES,
        });
        this.logger.info({ model: model.id, file, ms: Date.now() - started }, 'model loaded');
        return loaded;
      },
      unload: async (m) => {
        await m.close();
        this.logger.info({ model: model.id }, 'model unloaded');
      },
      idleMs: this.options.idleUnloadSeconds * 1000,
    });
    this.#models.set(model.id, resource);
    return resource;
  }
}

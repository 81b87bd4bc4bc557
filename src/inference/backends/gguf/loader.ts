/**
 * llama.cpp through node-llama-cpp: the one Llama instance of the process (prebuilt
 * binary from the runtime `sluice runtimes add gguf` installed; never built, never
 * downloaded), and a loaded GGUF model with its contexts and chat template (GgufModel
 * says why a model has two contexts).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ChatWrapper, Llama, LlamaContext, LlamaContextSequence, LlamaModel, NodeLlamaCpp } from './llama-api.js';
import type { GgufGpu } from './runtime.js';
import { chatTemplate, type ChatTemplate } from './prompt.js';

let shared: Promise<Llama> | null = null;

/**
 * The CPU build, unless `runtimes add gguf --gpu` added a GPU build: then node-llama-cpp picks
 * it when it finds that GPU ('auto'), and falls back to the CPU build when it does not.
 */
export function sharedLlama(runtime: NodeLlamaCpp, gpu: GgufGpu | null, logger: Logger): Promise<Llama> {
  shared ??= runtime.getLlama({
    gpu: gpu ? 'auto' : false,
    build: 'never',
    logLevel: 'warn',
    logger: (level, message) => {
      if (level === 'error' || level === 'fatal') logger.error({ llama: message.trim() }, 'llama.cpp');
      else if (level === 'warn') logger.warn({ llama: message.trim() }, 'llama.cpp');
    },
  }).catch((err: unknown) => {
    shared = null;
    throw err;
  });
  return shared;
}

/** The .gguf file of a model: the path itself, or the one in the directory (a Q4_K_M quantization preferred). */
export async function findGguf(where: string): Promise<string | null> {
  try {
    if ((await stat(where)).isFile()) return where.endsWith('.gguf') ? where : null;
    const files = (await readdir(where)).filter((f) => f.endsWith('.gguf')).sort();
    const pick = files.find((f) => /q4_k_m/i.test(f)) ?? files[0];
    return pick ? path.join(where, pick) : null;
  } catch {
    return null;
  }
}

export interface GgufLoadOptions {
  contextSize: number;
  threads: number | null;
  sequences: number;
}

/** A context's sequences, one caller each at a time: callers beyond them wait their turn. */
class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiting: ((s: LlamaContextSequence) => void)[] = [];

  constructor(readonly context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }

  async use<R>(fn: (sequence: LlamaContextSequence) => Promise<R>): Promise<R> {
    const sequence = this.free.pop() ?? (await new Promise<LlamaContextSequence>((resolve) => this.waiting.push(resolve)));
    try {
      return await fn(sequence);
    } finally {
      await sequence.clearHistory();
      const next = this.waiting.shift();
      if (next) next(sequence);
      else this.free.push(sequence);
    }
  }
}

/**
 * A loaded model: a context whose sequences concurrent generations share, and, opened on
 * first use, a context of one sequence for reads that must be reproducible.
 *
 * Why two: llama.cpp's floating-point sums depend on how a context's work is laid out.
 * Sequences of one context share its batches (which tokens decode together is a matter of
 * timing) and its key/value cells (a prompt lands in other cells when another sequence
 * holds some, and attention then sums over another range in another order), and the
 * threads a context gets shrink while other contexts decode. Any of these moved a decision
 * probability in its fifth digit between two runs of the same request. The isolated
 * context decodes one prompt at a time, from an empty cache, always in cell 0 onwards,
 * always in the same batches and on a fixed number of threads (it waits for them rather
 * than running on fewer), so the same prompt gives the same bits under any load.
 */
export class GgufModel {
  private readonly shared: SequencePool;
  private isolated: Promise<SequencePool> | null = null;
  private wrapper: ChatWrapper | null = null;

  private constructor(
    /** The runtime the model runs on (grammars are made by it). */
    readonly llama: Llama,
    readonly model: LlamaModel,
    context: LlamaContext,
    readonly template: ChatTemplate,
    private readonly threads: number,
  ) {
    this.shared = new SequencePool(context);
  }

  static async load(llama: Llama, file: string, options: GgufLoadOptions): Promise<GgufModel> {
    const model = await llama.loadModel({ modelPath: file });
    try {
      const contextSize = Math.min(options.contextSize, model.trainContextSize);
      const threads = options.threads ?? llama.cpuMathCores;
      const context = await model.createContext({ contextSize, sequences: options.sequences, threads: { ideal: threads, min: 1 } });
      const source = model.fileInfo.metadata.tokenizer?.chat_template;
      return new GgufModel(llama, model, context, chatTemplate(source, model.tokens.bosString, model.tokens.eosString), threads);
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  get contextSize(): number {
    return this.shared.context.contextSize;
  }

  /**
   * node-llama-cpp's chat wrapper for the model (function calling renders and parses
   * through it), resolved on first use: resolving compares the template with every
   * specialised wrapper's rendering.
   */
  chatWrapper(runtime: NodeLlamaCpp): ChatWrapper {
    this.wrapper ??= runtime.resolveChatWrapper(this.model, { warningLogs: false });
    return this.wrapper;
  }

  /** A sequence of the shared context: for generation, where throughput matters more than the last bit. */
  withSequence<R>(fn: (sequence: LlamaContextSequence) => Promise<R>): Promise<R> {
    return this.shared.use(fn);
  }

  /** The isolated context's one sequence, empty: the same prompt gives bit-identical logits every time. */
  async withIsolatedSequence<R>(fn: (sequence: LlamaContextSequence) => Promise<R>): Promise<R> {
    this.isolated ??= this.model
      .createContext({ contextSize: this.contextSize, sequences: 1, threads: { ideal: this.threads, min: this.threads } })
      .then((context) => new SequencePool(context))
      .catch((err: unknown) => {
        this.isolated = null;
        throw err;
      });
    return (await this.isolated).use(fn);
  }

  async close(): Promise<void> {
    const isolated = await this.isolated?.catch(() => null);
    await isolated?.context.dispose();
    await this.shared.context.dispose();
    await this.model.dispose();
  }
}

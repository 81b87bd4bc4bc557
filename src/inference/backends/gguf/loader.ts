/**
 * llama.cpp through node-llama-cpp: the one Llama instance of the process (prebuilt
 * binary from the runtime `sluice runtimes add gguf` installed; never built, never
 * downloaded), and a loaded GGUF model with its context, chat template and a fixed number
 * of sequences handed out to concurrent requests.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, NodeLlamaCpp } from './llama-api.js';
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

/** A loaded model. Sequences are a bounded pool: callers beyond it wait their turn. */
export class GgufModel {
  private free: LlamaContextSequence[] = [];
  private readonly waiting: ((s: LlamaContextSequence) => void)[] = [];

  private constructor(
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly template: ChatTemplate,
  ) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }

  static async load(llama: Llama, file: string, options: GgufLoadOptions): Promise<GgufModel> {
    const model = await llama.loadModel({ modelPath: file });
    try {
      const contextSize = Math.min(options.contextSize, model.trainContextSize);
      const context = await model.createContext({
        contextSize,
        sequences: options.sequences,
        ...(options.threads ? { threads: options.threads } : {}),
      });
      const source = model.fileInfo.metadata.tokenizer?.chat_template;
      return new GgufModel(model, context, chatTemplate(source, model.tokens.bosString, model.tokens.eosString));
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  async withSequence<R>(fn: (sequence: LlamaContextSequence) => Promise<R>): Promise<R> {
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

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}

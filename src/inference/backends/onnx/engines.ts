/**
 * Which in-process implementation serves which model id, what files each needs, and
 * one uniform Engine face over them for the backend (tokens, task, embeddings, speech).
 */
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import type { RuntimesConfig } from '../../../config/schema.js';
import type { TaskOutput, TaskParams, TranscriptionOutput, TranscriptionParams } from '../../../domain/models/inference-backend.port.js';
import type { OrtRuntime, OrtSession } from '../../runtime/ort-runtime.js';
import type { BatcherStats } from '../../runtime/dynamic-batcher.js';
import { EmbeddingEngine } from './embeddings.js';
import { ZeroShotEngine } from './zero-shot.js';
import { WhisperEngine } from './whisper/engine.js';
import { SummarizationEngine } from './summarize.js';
import { GlinerEngine } from './gliner/engine.js';
import { runPii } from './gliner/pii.js';
import { runGliner2 } from './gliner/gliner2.js';
import { noRuntimeFor } from './errors.js';

export type EngineKind = 'embeddings' | 'zero-shot' | 'gliner-pii' | 'gliner2' | 'summarization' | 'whisper';

/** Model ids the onnx runtime serves with an engine of their own (the zlm-* classifier packs run on an embedding model: ./packs.ts). */
export const ENGINE_KINDS: Readonly<Record<string, EngineKind>> = {
  'all-minilm-l6-v2': 'embeddings',
  'bge-small-en-v1.5': 'embeddings',
  'deberta-v3-small': 'zero-shot',
  'whisper-tiny': 'whisper',
  't5-small': 'summarization',
  'gliner-multi-pii-v1': 'gliner-pii',
  'gliner2-base-v1': 'gliner2',
};

export function requiredFiles(kind: EngineKind): { files: string[]; graphs: string[][] } {
  const files = ['config.json', 'tokenizer.json'];
  switch (kind) {
    case 'summarization':
    case 'whisper':
      return { files, graphs: [['encoder_model'], ['decoder_model_merged', 'decoder_model']] };
    case 'gliner-pii':
    case 'gliner2':
      return { files: [...files, 'gliner_config.json'], graphs: [['model']] };
    default:
      return { files, graphs: [['model']] };
  }
}

export interface Engine {
  countTokens(text: string): number;
  embed(inputs: readonly string[]): Promise<{ vectors: Float32Array[]; tokens: number }>;
  runTask(params: TaskParams): Promise<TaskOutput>;
  transcribe(params: TranscriptionParams): Promise<TranscriptionOutput>;
  /** NLI models: entailment and contradiction logits of a premise against each hypothesis. */
  pairLogits?(premise: string, hypotheses: readonly string[]): Promise<Array<{ entailment: number; contradiction: number }>>;
  readonly batchStats?: BatcherStats;
  close(): Promise<void>;
}

export interface EngineContext {
  runtime: OrtRuntime;
  dir: string;
  model: ModelSpec;
  options: RuntimesConfig;
  /** Called with the size of every embedding batch (metrics). */
  onEmbeddingBatch?: (model: string, size: number) => void;
}

/** Shared defaults: every capability refuses until an engine provides it. */
function engine(ctx: EngineContext, sessions: OrtSession[], parts: Partial<Engine> & Pick<Engine, 'countTokens'>): Engine {
  const refuse = async (): Promise<never> => {
    throw noRuntimeFor(ctx.model.id);
  };
  return {
    embed: refuse,
    runTask: refuse,
    transcribe: refuse,
    close: async () => {
      await Promise.allSettled(sessions.map((s) => ctx.runtime.release(s)));
    },
    ...parts,
  };
}

export async function loadEngine(kind: EngineKind, ctx: EngineContext): Promise<Engine> {
  switch (kind) {
    case 'embeddings': {
      // One single-threaded copy per core unless onnx_threads asks for wider runs.
      const threads = ctx.options.onnxThreads ?? 1;
      const onBatch = ctx.onEmbeddingBatch;
      const batching = {
        maxBatch: ctx.options.embeddingBatchSize,
        maxWaitMs: ctx.options.embeddingBatchWaitMs,
        intraOpThreads: threads,
        replicas: Math.max(1, Math.floor(ctx.runtime.workers / threads)),
        ...(onBatch ? { onBatch: (size: number) => onBatch(ctx.model.id, size) } : {}),
      };
      const e = await EmbeddingEngine.load(ctx.runtime, ctx.dir, ctx.model.id, ctx.model.contextLength, batching);
      return engine(ctx, e.sessions, {
        countTokens: (text) => e.tokenizer.count(text),
        embed: (inputs) => e.embed(inputs),
        batchStats: e.stats,
      });
    }
    case 'zero-shot': {
      const e = await ZeroShotEngine.load(ctx.runtime, ctx.dir);
      return engine(ctx, e.sessions, {
        countTokens: (text) => e.tokenizer.count(text),
        runTask: async (params) => {
          const { result, tokens } = await e.classify(params.input, params.labels ?? []);
          return { result, usage: { inputTokens: tokens, outputTokens: 0 } };
        },
        pairLogits: (premise, hypotheses) => e.pairLogits(premise, hypotheses),
      });
    }
    case 'gliner-pii':
    case 'gliner2': {
      const e = await GlinerEngine.load(ctx.runtime, ctx.dir);
      const run = kind === 'gliner-pii' ? runPii : runGliner2;
      return engine(ctx, e.sessions, {
        countTokens: (text) => e.tokenizer.count(text),
        runTask: async (params) => ({
          result: await run(e, params.input, params.options, params.labels),
          usage: { inputTokens: e.tokenizer.count(params.input), outputTokens: 0 },
        }),
      });
    }
    case 'summarization': {
      const e = await SummarizationEngine.load(ctx.runtime, ctx.dir);
      return engine(ctx, e.sessions, {
        countTokens: (text) => e.countTokens(text),
        runTask: async (params) => {
          const max = params.options.max_tokens ?? params.options.max_new_tokens;
          const out = await e.summarize(params.input, params.signal, typeof max === 'number' && max > 0 ? Math.floor(max) : undefined);
          return { result: out.summary, usage: { inputTokens: out.inputTokens, outputTokens: out.outputTokens } };
        },
      });
    }
    case 'whisper': {
      const e = await WhisperEngine.load(ctx.runtime, ctx.dir);
      return engine(ctx, e.sessions, {
        countTokens: (text) => e.countTokens(text),
        transcribe: (params) => e.transcribe(params),
      });
    }
    default:
      throw noRuntimeFor(ctx.model.id);
  }
}

/**
 * Sentence embeddings from a BERT-style encoder: tokenize (truncated at the model's
 * limit) on the event loop, batch dynamically, and in the ONNX worker pad, run
 * last_hidden_state, pool (mean over real tokens, or the [CLS] vector) and
 * L2-normalise, so only token ids go to the worker and only the vectors come back.
 *
 * The session is replicated, one single-threaded copy per core by default, and the
 * batcher keeps one batch in flight per copy.
 */
import type { OrtRuntime, OrtSession, WorkerContext } from '../../runtime/ort-runtime.js';
import { DynamicBatcher } from '../../runtime/dynamic-batcher.js';
import { findGraph, readJson, requireJson } from './loader.js';
import { TextTokenizer, type Encoded } from './tokenizer.js';

export type Pooling = 'mean' | 'cls';

/** Models whose pooling is not stated in a 1_Pooling/config.json. */
const DEFAULT_POOLING: Record<string, Pooling> = { 'bge-small-en-v1.5': 'cls', 'all-minilm-l6-v2': 'mean' };

export interface EmbeddingBatching {
  maxBatch: number;
  maxWaitMs: number;
  /** Copies of the session (batches in flight); default: one per worker. */
  replicas?: number;
  /** Threads per run; default 1. */
  intraOpThreads?: number;
  /** Called with the size of every batch (metrics). */
  onBatch?: (size: number) => void;
}

export interface PoolArgs {
  session: string;
  output: string;
  inputNames: readonly string[];
  /** Every row's ids, concatenated. */
  ids: Int32Array;
  /** Token type ids in the same layout, or null when the graph takes none. */
  typeIds: Int32Array | null;
  lengths: readonly number[];
  padId: number;
  pooling: Pooling;
}

export interface PoolResult {
  dim: number;
  /** [rows × dim] normalised vectors. */
  data: Float32Array;
}

const POOL_PROCEDURE = 'embeddings.forward-pool';

/**
 * Worker side (self-contained, see WorkerProcedure): right-pads the rows into int64
 * feeds, runs the encoder, pools every row over its real tokens and L2-normalises.
 * Mean pooling normalises the sum: the division by the count cancels out.
 */
export async function forwardAndPool(ctx: WorkerContext, a: PoolArgs) {
  const rows = a.lengths.length;
  let width = 1;
  for (const n of a.lengths) if (n > width) width = n;
  const ids = new BigInt64Array(rows * width).fill(BigInt(a.padId));
  const mask = new BigInt64Array(rows * width);
  const types = new BigInt64Array(rows * width);
  let at = 0;
  for (let b = 0; b < rows; b++) {
    const n = a.lengths[b]!;
    for (let t = 0; t < n; t++) {
      ids[b * width + t] = BigInt(a.ids[at + t]!);
      mask[b * width + t] = 1n;
      if (a.typeIds) types[b * width + t] = BigInt(a.typeIds[at + t]!);
    }
    at += n;
  }
  const all: Record<string, unknown> = {
    input_ids: new ctx.ort.Tensor('int64', ids, [rows, width]),
    attention_mask: new ctx.ort.Tensor('int64', mask, [rows, width]),
    token_type_ids: new ctx.ort.Tensor('int64', types, [rows, width]),
  };
  const feeds: Record<string, unknown> = {};
  for (const name of a.inputNames) if (all[name]) feeds[name] = all[name];
  const out = await ctx.session(a.session).run(feeds, [a.output]);
  const hidden = out[a.output];
  const dim = hidden.dims[2] as number;
  const seq = hidden.dims[1] as number;
  const data = hidden.data as Float32Array;
  const vectors = new Float32Array(rows * dim);
  for (let b = 0; b < rows; b++) {
    const count = a.pooling === 'cls' ? 1 : a.lengths[b]!;
    const v = b * dim;
    for (let t = 0; t < count; t++) {
      const base = (b * seq + t) * dim;
      for (let d = 0; d < dim; d++) vectors[v + d]! += data[base + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += vectors[v + d]! * vectors[v + d]!;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < dim; d++) vectors[v + d]! *= scale;
  }
  return { result: { dim, data: vectors }, transfer: [vectors.buffer] };
}

export class EmbeddingEngine {
  private readonly batcher: DynamicBatcher<Encoded, Float32Array>;
  private readonly usesTypeIds: boolean;

  private constructor(
    private readonly runtime: OrtRuntime,
    private readonly session: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly pooling: Pooling,
    private readonly maxTokens: number,
    private readonly padId: number,
    batching: EmbeddingBatching,
  ) {
    this.usesTypeIds = session.inputNames.includes('token_type_ids');
    this.batcher = new DynamicBatcher({
      run: (rows) => this.forward(rows),
      lengthOf: (row) => row.ids.length,
      maxBatch: batching.maxBatch,
      maxWaitMs: batching.maxWaitMs,
      concurrency: session.replicas,
      ...(batching.onBatch ? { onBatch: batching.onBatch } : {}),
    });
  }

  static async load(
    runtime: OrtRuntime,
    dir: string,
    modelId: string,
    contextLength: number,
    batching: EmbeddingBatching,
  ): Promise<EmbeddingEngine> {
    const config = await requireJson<{ max_position_embeddings?: number; pad_token_id?: number }>(dir, 'config.json');
    const graph = await findGraph(dir, 'model');
    if (!graph) throw new Error(`onnx/model.onnx is missing in ${dir}`);
    const tokenizer = await TextTokenizer.fromDir(dir);
    const poolingFile = await readJson<{ pooling_mode_cls_token?: boolean }>(dir, '1_Pooling/config.json');
    const pooling: Pooling = poolingFile ? (poolingFile.pooling_mode_cls_token ? 'cls' : 'mean') : (DEFAULT_POOLING[modelId] ?? 'mean');
    const maxTokens = Math.min(contextLength, config.max_position_embeddings ?? contextLength);
    runtime.define(POOL_PROCEDURE, forwardAndPool);
    const session = await runtime.load(graph, {
      replicas: batching.replicas ?? runtime.workers,
      intraOpThreads: batching.intraOpThreads ?? 1,
    });
    return new EmbeddingEngine(runtime, session, tokenizer, pooling, maxTokens, config.pad_token_id ?? 0, batching);
  }

  get stats() {
    return this.batcher.stats;
  }

  get sessions(): OrtSession[] {
    return [this.session];
  }

  /** One normalised vector per text, plus the tokens the model read (after truncation). */
  async embed(texts: readonly string[]): Promise<{ vectors: Float32Array[]; tokens: number }> {
    const rows = texts.map((t) => this.tokenizer.encode(t, this.maxTokens));
    const vectors = await this.batcher.submitAll(rows);
    return { vectors, tokens: rows.reduce((n, r) => n + r.ids.length, 0) };
  }

  private async forward(rows: Encoded[]): Promise<Float32Array[]> {
    const total = rows.reduce((n, r) => n + r.ids.length, 0);
    const ids = new Int32Array(total);
    const typeIds = this.usesTypeIds ? new Int32Array(total) : null;
    let at = 0;
    for (const row of rows) {
      ids.set(row.ids, at);
      if (typeIds) for (let t = 0; t < row.ids.length; t++) typeIds[at + t] = row.typeIds[t] ?? 0;
      at += row.ids.length;
    }
    const args: PoolArgs = {
      session: this.session.key,
      output: this.session.outputNames[0]!,
      inputNames: this.session.inputNames,
      ids,
      typeIds,
      lengths: rows.map((r) => r.ids.length),
      padId: this.padId,
      pooling: this.pooling,
    };
    const transfer = typeIds ? [ids.buffer, typeIds.buffer] : [ids.buffer];
    const { dim, data } = await this.runtime.call<PoolResult>(POOL_PROCEDURE, args, { session: this.session, transfer });
    return rows.map((_, b) => data.subarray(b * dim, (b + 1) * dim));
  }
}

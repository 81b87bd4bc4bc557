/**
 * Sentence embeddings from a BERT-style encoder: tokenize (truncated at the model's
 * limit), run last_hidden_state through dynamic batching, pool (mean over real tokens,
 * or the [CLS] vector), L2-normalise.
 */
import type { OrtRuntime, OrtSession, WireTensor } from '../../runtime/ort-runtime.js';
import { DynamicBatcher } from '../../runtime/dynamic-batcher.js';
import { findGraph, readJson, requireJson } from './loader.js';
import { TextTokenizer, padBatch, pickFeeds, type Encoded } from './tokenizer.js';

export type Pooling = 'mean' | 'cls';

/** Models whose pooling is not stated in a 1_Pooling/config.json. */
const DEFAULT_POOLING: Record<string, Pooling> = { 'bge-small-en-v1.5': 'cls', 'all-minilm-l6-v2': 'mean' };

export interface EmbeddingBatching {
  maxBatch: number;
  maxWaitMs: number;
}

export class EmbeddingEngine {
  private readonly batcher: DynamicBatcher<Encoded, Float32Array>;

  private constructor(
    private readonly session: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly pooling: Pooling,
    private readonly maxTokens: number,
    private readonly padId: number,
    batching: EmbeddingBatching,
  ) {
    this.batcher = new DynamicBatcher({
      run: (rows) => this.forward(rows),
      lengthOf: (row) => row.ids.length,
      maxBatch: batching.maxBatch,
      maxWaitMs: batching.maxWaitMs,
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
    const session = await runtime.load(graph);
    return new EmbeddingEngine(session, tokenizer, pooling, maxTokens, config.pad_token_id ?? 0, batching);
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
    const feeds = pickFeeds(padBatch(rows, this.padId), this.session.inputNames);
    const out = await this.session.run(feeds, { fetch: [this.session.outputNames[0]!] });
    return poolRows(out[this.session.outputNames[0]!]!, rows, this.pooling);
  }
}

/** Pools [batch, seq, hidden] per row over its real tokens and L2-normalises. */
export function poolRows(hidden: WireTensor, rows: readonly Encoded[], pooling: Pooling): Float32Array[] {
  const [, seq, dim] = hidden.dims as [number, number, number];
  const data = hidden.data as Float32Array;
  return rows.map((row, b) => {
    const v = new Float32Array(dim);
    const count = pooling === 'cls' ? 1 : row.ids.length;
    for (let t = 0; t < count; t++) {
      const base = (b * seq + t) * dim;
      for (let d = 0; d < dim; d++) v[d]! += data[base + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += v[d]! * v[d]!;
    // Mean then normalise equals normalising the sum, so the division by count is skipped.
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < dim; d++) v[d]! *= scale;
    return v;
  });
}

/**
 * Runs the decoder of an encoder-decoder export step by step with its key/value cache.
 * Supports the Optimum layouts transformers.js uses: `decoder_model_merged.onnx`
 * (past_key_values.* inputs, use_cache_branch) and the cache-less `decoder_model.onnx`
 * (the whole sequence every step). The encoder output and the cache stay in the ONNX
 * worker as retained tensors; only logits cross threads.
 */
import { randomUUID } from 'node:crypto';
import type { OrtRuntime, OrtSession, WireFeed, WireTensor } from '../../runtime/ort-runtime.js';

export interface DecoderShape {
  heads: number;
  headDim: number;
}

/** Key under which the encoder output is retained in the worker. */
export const ENCODER_OUT = 'encoder_out';

const int64 = (values: readonly number[]): WireTensor => ({
  type: 'int64',
  dims: [1, values.length],
  data: BigInt64Array.from(values.map((v) => BigInt(v))),
});

/** One generation: the encoder output of one input plus the decoder's growing cache. */
export class DecoderRun {
  readonly state = `gen-${randomUUID()}`;
  private cached = false;
  readonly pastNames: readonly string[];
  /** decoder_model_merged (key/value cache) rather than the cache-less decoder_model. */
  readonly merged: boolean;
  private encoderMask: WireTensor | null = null;
  private history: number[] = [];

  constructor(
    private readonly runtime: OrtRuntime,
    readonly decoder: OrtSession,
    readonly shape: DecoderShape,
  ) {
    this.pastNames = decoder.inputNames.filter((n) => n.startsWith('past_key_values.'));
    this.merged = this.pastNames.length > 0;
  }

  /** Runs the encoder and keeps its last_hidden_state in the worker for this run. */
  async encode(encoder: OrtSession, feeds: Record<string, WireTensor>): Promise<void> {
    if (feeds.attention_mask) this.encoderMask = { ...feeds.attention_mask, data: (feeds.attention_mask.data as BigInt64Array).slice() };
    const output = encoder.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : encoder.outputNames[0]!;
    await encoder.run(feeds, { state: this.state, retain: { [output]: ENCODER_OUT }, fetch: [] });
  }

  /**
   * Feeds `tokens` (the new ones; the cache holds the rest) and returns logits
   * [tokens.length, vocab] as one flat array. `keep: false` leaves the cache as it was,
   * for a look-ahead such as language detection.
   */
  async step(tokens: readonly number[], keep = true): Promise<{ logits: Float32Array; vocab: number }> {
    const all = this.merged ? tokens : [...this.history, ...tokens];
    const feeds: Record<string, WireFeed> = {
      input_ids: int64(all),
      encoder_hidden_states: { retained: ENCODER_OUT },
    };
    if (this.encoderMask && this.decoder.inputNames.includes('encoder_attention_mask')) {
      feeds.encoder_attention_mask = { ...this.encoderMask, data: (this.encoderMask.data as BigInt64Array).slice() };
    }
    const retain: Record<string, string> = {};
    if (this.merged) {
      for (const name of this.pastNames) {
        feeds[name] = this.cached ? { retained: name } : this.emptyPast();
        // Cross-attention keys/values depend on the encoder only: the first step's stay
        // (merged exports answer placeholders for them once the cache is in use).
        const crossCached = this.cached && name.includes('.encoder.');
        if (keep && !crossCached) retain[name.replace('past_key_values', 'present')] = name;
      }
      feeds.use_cache_branch = { type: 'bool', dims: [1], data: new Uint8Array([this.cached ? 1 : 0]) };
    }
    const out = await this.decoder.run(feeds, { state: this.state, retain, fetch: ['logits'] });
    if (keep) {
      this.cached = this.merged;
      this.history.push(...tokens);
    }
    const logits = out.logits!;
    const vocab = logits.dims[logits.dims.length - 1]!;
    const rows = all.length;
    // The cache-less decoder returns every position; callers want the new ones only.
    const data = logits.data as Float32Array;
    return { logits: data.subarray((rows - tokens.length) * vocab), vocab };
  }

  /** Forgets the decoder cache (keeps the encoder output) to decode a new prompt. */
  resetCache(): void {
    this.cached = false;
    this.history = [];
  }

  async close(): Promise<void> {
    await this.runtime.dropState(this.state);
  }

  private emptyPast(): WireTensor {
    return { type: 'float32', dims: [1, this.shape.heads, 0, this.shape.headDim], data: new Float32Array(0) };
  }
}

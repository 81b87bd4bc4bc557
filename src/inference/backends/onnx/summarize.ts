/**
 * T5 summarization: "summarize: " + text, truncated at the model's input limit (512
 * tokens), encoded once, then decoded greedily with the key/value cache under the
 * model's summarization parameters (config.task_specific_params.summarization: length
 * bounds, no repeated n-grams). The result is the summary string.
 */
import type { OrtRuntime, OrtSession } from '../../runtime/ort-runtime.js';
import { findAnyGraph, findGraph, requireJson } from './loader.js';
import { TextTokenizer, padBatch, pickFeeds } from './tokenizer.js';
import { DecoderRun } from './seq2seq.js';
import { argmax } from './math.js';
import { throwIfAborted } from './errors.js';

interface T5Config {
  d_model: number;
  num_heads: number;
  d_kv?: number;
  decoder_start_token_id?: number;
  eos_token_id?: number;
  pad_token_id?: number;
  task_specific_params?: { summarization?: { prefix?: string; max_length?: number; min_length?: number; no_repeat_ngram_size?: number } };
}

const MAX_INPUT_TOKENS = 512;
/** Hard ceiling on summary length, whatever the request asks. */
const MAX_NEW_TOKENS = 512;

/** Tokens that would repeat an n-gram already generated (HF's no_repeat_ngram_size). */
export function bannedByNgrams(tokens: readonly number[], n: number): Set<number> {
  const banned = new Set<number>();
  if (n <= 0 || tokens.length < n - 1) return banned;
  const tail = tokens.slice(tokens.length - (n - 1)).join(',');
  for (let i = 0; i + n <= tokens.length; i++) {
    if (tokens.slice(i, i + n - 1).join(',') === tail) banned.add(tokens[i + n - 1]!);
  }
  return banned;
}

export class SummarizationEngine {
  private constructor(
    private readonly runtime: OrtRuntime,
    private readonly encoder: OrtSession,
    private readonly decoder: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly config: T5Config,
  ) {}

  static async load(runtime: OrtRuntime, dir: string): Promise<SummarizationEngine> {
    const config = await requireJson<T5Config>(dir, 'config.json');
    const tokenizer = await TextTokenizer.fromDir(dir);
    const encoderFile = await findGraph(dir, 'encoder_model');
    const decoderFile = await findAnyGraph(dir, ['decoder_model_merged', 'decoder_model']);
    if (!encoderFile || !decoderFile) throw new Error(`encoder/decoder graphs are missing in ${dir}`);
    const encoder = await runtime.load(encoderFile);
    // The decoder reads the encoder output retained in the worker: same worker.
    const decoder = await runtime.load(decoderFile, { colocateWith: encoder });
    return new SummarizationEngine(runtime, encoder, decoder, tokenizer, config);
  }

  get sessions(): OrtSession[] {
    return [this.encoder, this.decoder];
  }

  private get params() {
    const p = this.config.task_specific_params?.summarization ?? {};
    return { prefix: p.prefix ?? 'summarize: ', maxLength: p.max_length ?? 200, minLength: p.min_length ?? 0, ngram: p.no_repeat_ngram_size ?? 0 };
  }

  countTokens(text: string): number {
    return this.tokenizer.count(this.params.prefix + text);
  }

  /** `maxNewTokens` overrides the model's summary length bound. */
  async summarize(text: string, signal: AbortSignal, maxNewTokens?: number): Promise<{ summary: string; inputTokens: number; outputTokens: number }> {
    const p = this.params;
    const row = this.tokenizer.encode(p.prefix + text, MAX_INPUT_TOKENS);
    const run = new DecoderRun(this.runtime, this.decoder, { heads: this.config.num_heads, headDim: this.config.d_kv ?? this.config.d_model / this.config.num_heads });
    const eos = this.config.eos_token_id ?? 1;
    const limit = Math.min(maxNewTokens ?? p.maxLength, MAX_NEW_TOKENS);
    const out: number[] = [];
    try {
      const feeds = pickFeeds(padBatch([row], this.config.pad_token_id ?? 0), this.encoder.inputNames);
      await run.encode(this.encoder, feeds);
      let next = this.config.decoder_start_token_id ?? 0;
      while (out.length < limit) {
        throwIfAborted(signal);
        const logits = (await run.step([next])).logits.slice();
        if (out.length < p.minLength) logits[eos] = -Infinity;
        for (const id of bannedByNgrams(out, p.ngram)) logits[id] = -Infinity;
        next = argmax(logits);
        if (next === eos) break;
        out.push(next);
      }
    } finally {
      await run.close();
    }
    return { summary: this.tokenizer.decode(out).trim(), inputTokens: row.ids.length, outputTokens: out.length };
  }
}

/**
 * A GLiNER span model (GLiNER's ONNX export): entities of the given labels in a text,
 * with scores and character offsets. Long texts are cut into chunks that fit the
 * model's word and token limits and run together as one batch.
 */
import type { OrtRuntime, OrtSession } from '../../../runtime/ort-runtime.js';
import { findGraph, readJson } from '../loader.js';
import { TextTokenizer } from '../tokenizer.js';
import { buildFeeds, chunkWords, decodeSpans, promptIds, splitWords, type PromptTokens, type Span } from './spans.js';

interface GlinerConfig {
  max_width?: number;
  max_len?: number;
  ent_token?: string;
  sep_token?: string;
}

/** Sub-tokens a DeBERTa backbone takes. */
const MAX_TOKENS = 512;
/** Chunks per graph run; longer texts take several runs. */
const CHUNKS_PER_RUN = 8;

export interface Entity extends Span {
  text: string;
}

export class GlinerEngine {
  private constructor(
    private readonly session: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly prompt: PromptTokens,
    private readonly maxWidth: number,
    private readonly maxWords: number,
  ) {}

  static async load(runtime: OrtRuntime, dir: string): Promise<GlinerEngine> {
    const config = (await readJson<GlinerConfig>(dir, 'gliner_config.json')) ?? {};
    const tokenizer = await TextTokenizer.fromDir(dir);
    const graph = await findGraph(dir, 'model');
    if (!graph) throw new Error(`onnx/model.onnx is missing in ${dir}`);
    const ent = tokenizer.idOf(config.ent_token ?? '<<ENT>>');
    const labelSep = tokenizer.idOf(config.sep_token ?? '<<SEP>>');
    if (ent === undefined || labelSep === undefined) throw new Error(`the tokenizer in ${dir} has no <<ENT>>/<<SEP>> tokens`);
    const { prefix, suffix } = tokenizer.templateIds();
    const session = await runtime.load(graph);
    return new GlinerEngine(session, tokenizer, { cls: prefix, sep: suffix, ent, labelSep }, config.max_width ?? 12, config.max_len ?? 384);
  }

  get sessions(): OrtSession[] {
    return [this.session];
  }

  /** Entities of `labels` scoring above `threshold`, in text order. */
  async extract(text: string, labels: readonly string[], threshold: number): Promise<Entity[]> {
    const words = splitWords(text);
    if (words.length === 0 || labels.length === 0) return [];
    const prompt = promptIds(this.tokenizer, labels, this.prompt);
    const fixed = prompt.length + this.prompt.cls.length + this.prompt.sep.length;
    const chunks = chunkWords(words, (w) => this.tokenizer.ids(w.text).length, fixed, this.maxWords, MAX_TOKENS);
    const spans: Span[] = [];
    for (let from = 0; from < chunks.length; from += CHUNKS_PER_RUN) {
      const group = chunks.slice(from, from + CHUNKS_PER_RUN);
      const feeds = buildFeeds(this.tokenizer, prompt, group, this.maxWidth, this.prompt);
      const out = await this.session.run(feeds, { fetch: ['logits'] });
      group.forEach((chunk, row) => spans.push(...decodeSpans(out.logits!, row, chunk, labels, threshold)));
    }
    return spans.map((s) => ({ ...s, text: text.slice(s.start, s.end) }));
  }
}

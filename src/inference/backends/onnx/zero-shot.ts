/**
 * Zero-shot classification by natural-language inference (the transformers
 * zero-shot-classification recipe): the input is the premise, each label becomes the
 * hypothesis "This example is {label}.", all pairs run as one batch, and the labels'
 * entailment logits are soft-maxed against each other. Label indices come from the
 * model's config.id2label.
 */
import type { OrtRuntime, OrtSession } from '../../runtime/ort-runtime.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { findGraph, requireJson } from './loader.js';
import { TextTokenizer, padBatch, pickFeeds } from './tokenizer.js';
import { softmax } from './math.js';

export const HYPOTHESIS_TEMPLATE = 'This example is {label}.';
export const MAX_LABELS = 10;

interface NliConfig {
  id2label?: Record<string, string>;
  max_position_embeddings?: number;
  pad_token_id?: number;
}

export class ZeroShotEngine {
  private constructor(
    private readonly session: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly entailment: number,
    private readonly maxTokens: number,
    private readonly padId: number,
    /** Index of the contradiction class, or -1 when the model has none. */
    private readonly contradiction: number = -1,
  ) {}

  static async load(runtime: OrtRuntime, dir: string): Promise<ZeroShotEngine> {
    const config = await requireJson<NliConfig>(dir, 'config.json');
    const labels = Object.entries(config.id2label ?? {});
    const entailment = labels.find(([, name]) => name.toLowerCase().startsWith('entail'));
    if (!entailment) throw new Error(`config.json of ${dir} has no entailment label in id2label`);
    const graph = await findGraph(dir, 'model');
    if (!graph) throw new Error(`onnx/model.onnx is missing in ${dir}`);
    const tokenizer = await TextTokenizer.fromDir(dir);
    const session = await runtime.load(graph);
    const maxTokens = Math.min(512, config.max_position_embeddings ?? 512);
    const contradiction = labels.find(([, name]) => name.toLowerCase().startsWith('contra'));
    return new ZeroShotEngine(session, tokenizer, Number(entailment[0]), maxTokens, config.pad_token_id ?? 0, contradiction ? Number(contradiction[0]) : -1);
  }

  get sessions(): OrtSession[] {
    return [this.session];
  }

  /**
   * Entailment and contradiction logits of `premise` against each hypothesis as given
   * (no template), all pairs in one batch: the decision route's `nli` scorer.
   * Contradiction is -Infinity when the model has no such class.
   */
  async pairLogits(premise: string, hypotheses: readonly string[]): Promise<Array<{ entailment: number; contradiction: number }>> {
    if (hypotheses.length === 0) return [];
    const rows = hypotheses.map((h) => this.tokenizer.encode(premise, this.maxTokens, h));
    const out = await this.session.run(pickFeeds(padBatch(rows, this.padId), this.session.inputNames), { fetch: ['logits'] });
    const logits = out.logits!;
    const classes = logits.dims[1]!;
    const data = logits.data as Float32Array;
    return hypotheses.map((_, i) => ({
      entailment: data[i * classes + this.entailment]!,
      contradiction: this.contradiction === -1 ? -Infinity : data[i * classes + this.contradiction]!,
    }));
  }

  /** {label: probability}, sorted by probability, descending. */
  async classify(text: string, labels: readonly string[]): Promise<{ result: Record<string, number>; tokens: number }> {
    // Labels come back lower-cased, as the hosted service answers (digest §1.3).
    const unique = [...new Set(labels.map((l) => l.trim().toLowerCase()).filter(Boolean))];
    if (unique.length === 0) throw invalidRequest('Zero-shot classification needs at least one candidate label', 'instructions');
    if (unique.length > MAX_LABELS) {
      throw invalidRequest(`At most ${MAX_LABELS} candidate labels are allowed, got ${unique.length}`, 'instructions');
    }
    const rows = unique.map((label) => this.tokenizer.encode(text, this.maxTokens, HYPOTHESIS_TEMPLATE.replace('{label}', label)));
    const feeds = pickFeeds(padBatch(rows, this.padId), this.session.inputNames);
    const out = await this.session.run(feeds, { fetch: ['logits'] });
    const logits = out.logits!;
    const classes = logits.dims[1]!;
    const entailment = unique.map((_, i) => (logits.data as Float32Array)[i * classes + this.entailment]!);
    const probs = softmax(entailment);
    const ranked = unique.map((label, i) => [label, probs[i]!] as const).sort((a, b) => b[1] - a[1]);
    return { result: Object.fromEntries(ranked), tokens: this.tokenizer.count(text) };
  }
}

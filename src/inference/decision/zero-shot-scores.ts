/**
 * The decision route's zero-shot scorers (rule 5), over texts that are not the model's
 * labels:
 * - `embedding`: cosine similarity of the state's embedding (the pack's backbone, the
 *   same pass that gave the label scores) with each text's, the texts embedded once and
 *   cached; options get softmax(cos/T), a single text σ(cos/T + b), T and b the packs'
 *   zero-shot calibration.
 * - `nli`: every (state, text) pair through the NLI cross-encoder in one batch, the text
 *   as the hypothesis; options get the softmax of their entailment logits, a single text
 *   the softmax of entailment against contradiction (neutral dropped, as the
 *   transformers zero-shot recipe does for multi-label).
 */
import type { ZeroShotScores } from '../../domain/decision/scorer.port.js';
import { AppError } from '../../domain/shared/errors.js';
import type { Backbone } from '../classifier/pack.js';
import { ZERO_SHOT_CALIBRATION } from '../classifier/manifest.js';

export type NliRunner = (premise: string, hypotheses: readonly string[]) => Promise<Array<{ entailment: number; contradiction: number }>>;

interface VectorCache {
  get(key: string): Float32Array | undefined;
  set(key: string, value: Float32Array): void;
}

/** Embeddings of `texts`: cached ones from `cache`, the rest in one backbone call (then cached). */
export async function embedCached(cache: VectorCache, backbone: Backbone, texts: readonly string[], signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  const missing: string[] = [];
  for (const text of texts) {
    const hit = cache.get(text);
    if (hit) out.set(text, hit);
    else missing.push(text);
  }
  if (missing.length > 0) {
    const { vectors } = await backbone.embed(missing, signal);
    missing.forEach((text, i) => {
      cache.set(text, vectors[i]!);
      out.set(text, vectors[i]!);
    });
  }
  return out;
}

function softmax(logits: readonly number[]): number[] {
  const top = Math.max(...logits);
  const w = logits.map((l) => Math.exp(l - top));
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

function lookUp<V>(values: ReadonlyMap<string, V>, text: string): V {
  const value = values.get(text);
  if (value === undefined) throw new AppError('internal', 'a zero-shot text was not scored');
  return value;
}

export function embeddingScores(state: Float32Array, vectors: ReadonlyMap<string, Float32Array>): ZeroShotScores {
  const { temperature, bias } = ZERO_SHOT_CALIBRATION;
  const cos = (text: string) => {
    const v = lookUp(vectors, text);
    let s = 0;
    for (let i = 0; i < v.length; i++) s += v[i]! * state[i]!;
    return s;
  };
  return {
    options: (texts) => softmax(texts.map((t) => cos(t) / temperature)),
    yes: (text) => sigmoid(cos(text) / temperature + bias),
  };
}

export function nliScores(texts: readonly string[], pairs: ReadonlyArray<{ entailment: number; contradiction: number }>): ZeroShotScores {
  const byText = new Map(texts.map((t, i) => [t, pairs[i]!]));
  return {
    options: (options) => softmax(options.map((t) => lookUp(byText, t).entailment)),
    yes: (text) => {
      const { entailment, contradiction } = lookUp(byText, text);
      return contradiction === -Infinity ? sigmoid(entailment) : softmax([entailment, contradiction])[0]!;
    },
  };
}

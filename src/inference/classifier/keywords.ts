/**
 * Keyword extraction on the pack's own backbone, as KeyBERT does it: candidate n-grams
 * (1–3 words, no stop word at either end) are embedded, ranked by cosine similarity to
 * the document's embedding, and picked by Maximal Marginal Relevance so the list is
 * relevant but not repetitive. Written here because the npm keyword extractors are
 * frequency-based (RAKE, TF-IDF) and none works on our embeddings.
 *
 * The stop-word list is a short English one: candidates only need their edges trimmed.
 */
import type { Backbone } from './pack.js';

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this to too up us was we were what ' +
    'when where which while who why will with would you your about after all also any just more most new over some such ' +
    'very via per out get got'
  ).split(' '),
);

/** Words of `text`: lower-cased runs of letters and digits (any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
}

export const isStopWord = (w: string): boolean => STOP_WORDS.has(w);

/** Distinct 1–3-word candidates, first occurrence order, at most `limit`. */
export function candidates(text: string, maxWords = 3, limit = 48): string[] {
  const ws = words(text);
  const seen = new Set<string>();
  for (let n = 1; n <= maxWords; n++) {
    for (let i = 0; i + n <= ws.length; i++) {
      const gram = ws.slice(i, i + n);
      if (isStopWord(gram[0]!) || isStopWord(gram[n - 1]!) || gram.some((w) => w.length < 2)) continue;
      seen.add(gram.join(' '));
      if (seen.size >= limit) return [...seen];
    }
  }
  return [...seen];
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

export interface RankedPhrase {
  phrase: string;
  /** Cosine similarity to the document, in [0, 1]. */
  score: number;
}

/**
 * MMR: repeatedly take the candidate maximising
 * λ·sim(candidate, doc) − (1 − λ)·max sim(candidate, already picked).
 */
export function mmr(doc: Float32Array, phrases: readonly string[], vectors: readonly Float32Array[], k: number, lambda = 0.7): RankedPhrase[] {
  const relevance = vectors.map((v) => dot(v, doc));
  const picked: number[] = [];
  while (picked.length < Math.min(k, phrases.length)) {
    let best = -1;
    let bestValue = -Infinity;
    for (let i = 0; i < phrases.length; i++) {
      if (picked.includes(i)) continue;
      const redundancy = picked.length === 0 ? 0 : Math.max(...picked.map((j) => dot(vectors[i]!, vectors[j]!)));
      const value = lambda * relevance[i]! - (1 - lambda) * redundancy;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    picked.push(best);
  }
  return picked.map((i) => ({ phrase: phrases[i]!, score: Math.max(0, Math.min(1, relevance[i]!)) }));
}

export interface Keyphrases {
  /** Multi-word and single-word phrases, MMR order. */
  topics: RankedPhrase[];
  /** Single words, MMR order. */
  keywords: string[];
  tokens: number;
}

/** Embeds every candidate in one backbone call and ranks topics (n-grams) and keywords (words). */
export async function extractKeyphrases(backbone: Backbone, text: string, doc: Float32Array, k: number, signal?: AbortSignal): Promise<Keyphrases> {
  const phrases = candidates(text);
  if (phrases.length === 0) return { topics: [], keywords: [], tokens: 0 };
  const { vectors, tokens } = await backbone.embed(phrases, signal);
  const single = phrases.map((p, i) => [p, i] as const).filter(([p]) => !p.includes(' '));
  const topics = mmr(doc, phrases, vectors, k);
  const keywords = mmr(doc, single.map(([p]) => p), single.map(([, i]) => vectors[i]!), k).map((r) => r.phrase);
  return { topics, keywords, tokens };
}

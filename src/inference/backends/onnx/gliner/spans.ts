/**
 * GLiNER's pre- and post-processing for its span-mode ONNX export: word splitting with
 * character offsets (GLiNER's whitespace splitter), the prompt
 * [CLS] <<ENT>> label … <<SEP>> words… [SEP] with words_mask marking each word's first
 * sub-token, span enumeration up to max_width words, and decoding: sigmoid, threshold,
 * greedy selection of non-overlapping spans, character offsets with exclusive end.
 */
import type { WireTensor } from '../../../runtime/ort-runtime.js';
import type { TextTokenizer } from '../tokenizer.js';
import { sigmoid } from '../math.js';

export interface Word {
  text: string;
  start: number;
  end: number;
}

export interface Span {
  start: number;
  end: number;
  label: string;
  score: number;
}

/** GLiNER's `\w+(?:[-_]\w+)*|\S`, Unicode-aware. */
const WORD = /[\p{L}\p{N}\p{M}_]+(?:[-_][\p{L}\p{N}\p{M}_]+)*|\S/gu;

export function splitWords(text: string): Word[] {
  return Array.from(text.matchAll(WORD), (m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));
}

export interface PromptTokens {
  cls: number[];
  sep: number[];
  ent: number;
  labelSep: number;
}

/**
 * Splits the words into chunks that fit the model: at most `maxWords` words and
 * `maxTokens` sub-tokens including the label prompt, so long texts are covered whole.
 */
export function chunkWords(words: readonly Word[], tokensOf: (w: Word) => number, promptTokens: number, maxWords: number, maxTokens: number): Word[][] {
  const chunks: Word[][] = [];
  let current: Word[] = [];
  let used = promptTokens;
  for (const word of words) {
    const n = Math.max(1, tokensOf(word));
    if (current.length > 0 && (current.length >= maxWords || used + n > maxTokens)) {
      chunks.push(current);
      current = [];
      used = promptTokens;
    }
    current.push(word);
    used += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

const i64 = (values: ArrayLike<number>, dims: number[]): WireTensor => ({
  type: 'int64',
  dims,
  data: BigInt64Array.from(Array.from(values, (v) => BigInt(v))),
});

export function promptIds(tokenizer: TextTokenizer, labels: readonly string[], t: PromptTokens): number[] {
  return [...labels.flatMap((label) => [t.ent, ...tokenizer.ids(label)]), t.labelSep];
}

/** The six GLiNER inputs for a batch of word chunks sharing one label set. */
export function buildFeeds(tokenizer: TextTokenizer, prompt: readonly number[], chunks: readonly Word[][], maxWidth: number, t: PromptTokens): Record<string, WireTensor> {
  const rows = chunks.map((words) => {
    const ids = [...t.cls, ...prompt];
    const mask = new Array<number>(ids.length).fill(0);
    words.forEach((word, k) => {
      const sub = tokenizer.ids(word.text);
      sub.forEach((id, i) => {
        ids.push(id);
        mask.push(i === 0 ? k + 1 : 0);
      });
    });
    ids.push(...t.sep);
    mask.push(...t.sep.map(() => 0));
    return { ids, mask, words: words.length };
  });
  const B = rows.length;
  const S = Math.max(...rows.map((r) => r.ids.length));
  const W = Math.max(...rows.map((r) => r.words));
  const ids = new Array<number>(B * S).fill(0);
  const attention = new Array<number>(B * S).fill(0);
  const wordsMask = new Array<number>(B * S).fill(0);
  const spanIdx = new Array<number>(B * W * maxWidth * 2).fill(0);
  const spanMask = new Uint8Array(B * W * maxWidth);
  rows.forEach((r, b) => {
    r.ids.forEach((id, s) => {
      ids[b * S + s] = id;
      attention[b * S + s] = 1;
      wordsMask[b * S + s] = r.mask[s]!;
    });
    for (let i = 0; i < r.words; i++) {
      for (let j = 0; j < maxWidth && i + j < r.words; j++) {
        // Invalid spans stay (0, 0) and masked, as GLiNER's collator leaves them.
        const n = (b * W + i) * maxWidth + j;
        spanIdx[n * 2] = i;
        spanIdx[n * 2 + 1] = i + j;
        spanMask[n] = 1;
      }
    }
  });
  return {
    input_ids: i64(ids, [B, S]),
    attention_mask: i64(attention, [B, S]),
    words_mask: i64(wordsMask, [B, S]),
    text_lengths: i64(rows.map((r) => r.words), [B, 1]),
    span_idx: i64(spanIdx, [B, W * maxWidth, 2]),
    span_mask: { type: 'bool', dims: [B, W * maxWidth], data: spanMask },
  };
}

/**
 * Spans of one batch row above `threshold`, greedily kept from the highest score down
 * when they overlap no kept span (flat NER), in text order, with character offsets.
 */
export function decodeSpans(logits: WireTensor, row: number, words: readonly Word[], labels: readonly string[], threshold: number): Span[] {
  const [, W, maxWidth, C] = logits.dims as [number, number, number, number];
  const data = logits.data as Float32Array;
  const candidates: { i: number; j: number; c: number; score: number }[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let j = 0; j < maxWidth && i + j < words.length; j++) {
      for (let c = 0; c < C; c++) {
        const score = sigmoid(data[((row * W + i) * maxWidth + j) * C + c]!);
        if (score > threshold) candidates.push({ i, j, c, score });
      }
    }
  }
  candidates.sort((a, b) => b.score - a.score);
  const kept: typeof candidates = [];
  for (const cand of candidates) {
    const overlaps = kept.some((k) => cand.i <= k.i + k.j && k.i <= cand.i + cand.j);
    if (!overlaps) kept.push(cand);
  }
  return kept
    .sort((a, b) => a.i - b.i)
    .map((k) => ({ start: words[k.i]!.start, end: words[k.i + k.j]!.end, label: labels[k.c]!, score: k.score }));
}

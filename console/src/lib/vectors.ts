/** The embeddings playground's arithmetic: cosine similarity and a short preview of a vector. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) throw new Error('vectors of different lengths');
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The first `n` components to 4 decimals, with an ellipsis when there are more. */
export const preview = (vector: readonly number[], n = 8): string =>
  `[${vector.slice(0, n).map((x) => x.toFixed(4)).join(', ')}${vector.length > n ? ', …' : ''}]`;

/** Moderation category scores, highest first. */
export const rankedScores = (scores: Record<string, number>): Array<[string, number]> => Object.entries(scores).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));

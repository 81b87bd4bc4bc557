/**
 * What the domain classifier reads: a URL or bare domain turned into words.
 * `https://www.nytimes.com/section/technology` → "ny times section technology":
 * punycode labels decoded (`xn--…`), `www` and the public suffix dropped, subdomains and
 * path segments split on punctuation, and run-together words segmented by dynamic
 * programming over the backbone tokenizer's whole-word vocabulary (fewest, longest
 * known words; unknown letters kept together as one word).
 */
import { domainToUnicode } from 'node:url';

/** Second-level labels that are part of a country's public suffix (co.uk, com.au, …). */
const SECOND_LEVEL = new Set(['co', 'com', 'org', 'net', 'gov', 'ac', 'edu', 'ne', 'or', 'go']);
const DROPPED_LABELS = new Set(['www', 'www2', 'www3', 'm', 'amp']);
const FILE_SUFFIX = /\.(html?|php|aspx?|jsp|cgi)$/i;

/**
 * Costs: a known word of 3+ letters is cheapest, a 2-letter one dearer; single letters
 * (every WordPiece vocabulary has them all) count as unknown.
 */
function pieceCost(piece: string, known: boolean): number {
  if (!known || piece.length < 2) return Infinity;
  return piece.length >= 3 ? 1 : 1.5;
}
const UNKNOWN_CHAR = 3;
const MAX_WORD = 24;
/** A split that leaves more than this share of letters unknown is noise: keep the chunk whole. */
const MAX_UNKNOWN_SHARE = 1 / 3;

/** Splits one run of letters into words: "nytimes" → ["ny", "times"]. */
export function segmentWord(chunk: string, hasWord: (w: string) => boolean): string[] {
  const n = chunk.length;
  if (n === 0) return [];
  const cost = new Float64Array(n + 1).fill(Infinity);
  const from = new Int32Array(n + 1).fill(-1);
  const unknown = new Uint8Array(n + 1);
  cost[0] = 0;
  for (let end = 1; end <= n; end++) {
    // One unknown letter.
    cost[end] = cost[end - 1]! + UNKNOWN_CHAR;
    from[end] = end - 1;
    unknown[end] = 1;
    for (let start = Math.max(0, end - MAX_WORD); start < end; start++) {
      const piece = chunk.slice(start, end);
      const c = cost[start]! + pieceCost(piece, hasWord(piece));
      if (c < cost[end]!) {
        cost[end] = c;
        from[end] = start;
        unknown[end] = 0;
      }
    }
  }
  const pieces: { text: string; unknown: boolean }[] = [];
  for (let end = n; end > 0; end = from[end]!) pieces.unshift({ text: chunk.slice(from[end]!, end), unknown: unknown[end] === 1 });
  const unknownLetters = pieces.filter((p) => p.unknown).length;
  if (unknownLetters > n * MAX_UNKNOWN_SHARE) return [chunk];
  // Unknown letters next to each other are one word ("ny", not "n y").
  const out: string[] = [];
  let run = '';
  for (const p of pieces) {
    if (p.unknown) {
      run += p.text;
      continue;
    }
    if (run) out.push(run);
    run = '';
    out.push(p.text);
  }
  if (run) out.push(run);
  return out;
}

function hostLabels(host: string): string[] {
  const labels = domainToUnicode(host).toLowerCase().split('.').filter(Boolean);
  if (labels.length > 1) labels.pop();
  if (labels.length > 1 && SECOND_LEVEL.has(labels[labels.length - 1]!)) labels.pop();
  return labels.filter((l) => !DROPPED_LABELS.has(l));
}

function parse(input: string): { host: string; path: string } {
  const trimmed = input.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  try {
    const url = new URL(withScheme);
    return { host: url.hostname, path: decodeURIComponent(url.pathname) };
  } catch {
    return { host: '', path: trimmed };
  }
}

/** The words a URL or domain stands for, space-separated and lower case. */
export function domainToWords(input: string, hasWord: (w: string) => boolean): string {
  const { host, path } = parse(input);
  const chunks = [...hostLabels(host), ...path.split('/').map((s) => s.replace(FILE_SUFFIX, ''))];
  const out: string[] = [];
  for (const chunk of chunks) {
    for (const part of chunk.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if (!part) continue;
      for (const run of part.match(/\p{L}+|\p{N}+/gu) ?? []) out.push(...(/\p{N}/u.test(run) ? [run] : segmentWord(run, hasWord)));
    }
  }
  return out.join(' ');
}

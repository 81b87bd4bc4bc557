/**
 * One classification call on a pack: the text (for the domain classifier, the words of
 * the URL) embedded once, every label set scored from that one vector, and for the
 * enriched models the keyphrases (one more backbone call for all candidates) and the
 * user intent (zero-shot over the four intents, normalised to sum to 1).
 */
import type { ModerationResult } from '../../domain/models/inference-backend.port.js';
import type { ClassifierPack, PackScores } from './pack.js';
import { domainToWords } from './domain-words.js';
import { extractKeyphrases, isStopWord, words } from './keywords.js';
import { iabResult, moderationResult, type Enrichment } from './outputs.js';
import { outputLimits } from './manifest.js';

/** Words of the intent's `name`: the text's content words, as the digest's example reads. */
const INTENT_NAME_WORDS = 8;

export interface PackAnswer<T> {
  result: T;
  /** Tokens of the classified text as the backbone read it. */
  tokens: number;
}

/** The text a pack embeds for `input`. */
export function packText(pack: ClassifierPack, input: string): string {
  return pack.manifest.kind === 'iab-domain' ? domainToWords(input, (w) => pack.backbone.hasWord(w)) || input : input;
}

async function enrich(pack: ClassifierPack, text: string, scores: PackScores, signal?: AbortSignal): Promise<Enrichment> {
  const topics = outputLimits(pack.manifest, 'topics');
  const keywords = outputLimits(pack.manifest, 'keywords');
  const phrases = await extractKeyphrases(pack.backbone, text, scores.vector, Math.max(topics.topK, keywords.topK), signal);
  const intents = scores.sets.get('user_intent');
  let category = 'informational';
  let score = 0;
  if (intents) {
    const total = intents.probs.reduce((a, b) => a + b, 0);
    intents.probs.forEach((p, i) => {
      const share = total > 0 ? p / total : 1 / intents.probs.length;
      if (share > score) {
        score = share;
        category = intents.set.labels[i]!.name;
      }
    });
  }
  const name = words(text).filter((w) => !isStopWord(w)).slice(0, INTENT_NAME_WORDS).join(' ');
  return {
    topics: phrases.topics.filter((t) => t.score >= topics.minScore).slice(0, topics.topK),
    keywords: phrases.keywords.slice(0, keywords.topK),
    intent: { name, category, score },
  };
}

export async function classifyIab(pack: ClassifierPack, input: string, signal?: AbortSignal): Promise<PackAnswer<Record<string, unknown>>> {
  const text = packText(pack, input);
  const scores = await pack.score(text, signal);
  const enriched = pack.manifest.kind !== 'iab-edge';
  const enrichment = enriched ? await enrich(pack, text, scores, signal) : null;
  return { result: iabResult(pack.manifest, scores, enrichment), tokens: scores.tokens };
}

export async function moderateTexts(pack: ClassifierPack, inputs: readonly string[], signal?: AbortSignal): Promise<PackAnswer<ModerationResult[]>> {
  const { vectors, tokens } = await pack.backbone.embed(inputs, signal);
  const scored = await pack.scoreVectors(vectors);
  const results = vectors.map((vector, i) => moderationResult(pack.manifest, { vector, tokens: 0, sets: scored[i]! }));
  return { result: results, tokens };
}

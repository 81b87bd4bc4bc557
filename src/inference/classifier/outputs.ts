/**
 * A pack's answer in the exact shapes of digest §1.3: `zlm-v1-iab-classify-edge` (names
 * and scores), the enriched and multi-IAB models (ids, parent ids, tier names, topics,
 * keywords, user intent), the domain classifier (no audience) and moderation (13
 * categories in OpenAI's order, thresholds, flagged, the unsafe score).
 *
 * Content 1.0 scores come from Content 2.2 through the official mappings: a 1.0 code
 * scores the best of the 2.2 nodes it maps to, and a 1.0 tier-1 code its best child.
 */
import type { ModerationResult } from '../../domain/models/inference-backend.port.js';
import { loadIabTaxonomies, type Content10Node } from './taxonomy.js';
import { MODERATION_LABELS, type Label, type LabelSet } from '../../domain/shared/classification/label-sets.js';
import { outputLimits, type OutputList, type PackManifest } from './manifest.js';
import type { PackScores } from './pack.js';
import { topK } from './scoring.js';
import type { RankedPhrase } from './keywords.js';

export interface Enrichment {
  topics: RankedPhrase[];
  keywords: string[];
  intent: { name: string; category: string; score: number };
}

type Round = (x: number) => number;
const round4: Round = (x) => Math.round(x * 10_000) / 10_000;
const exact: Round = (x) => x;

interface Content10Index {
  nodes: Content10Node[];
  /** Node i maps to the Content 2.2 labels targets[starts[i] .. starts[i + 1]) (indices in the set). */
  starts: Int32Array;
  targets: Int32Array;
  /** For each 1.0 node, its parent's position in `nodes` (-1 for tier 1). */
  parents: Int32Array;
}
const content10Indices = new WeakMap<LabelSet, Content10Index>();

function content10Index(set: LabelSet): Content10Index {
  let index = content10Indices.get(set);
  if (index) return index;
  const tax = loadIabTaxonomies();
  const byKey = new Map(set.labels.map((l, i) => [l.key, i]));
  const perNode = tax.content10.map((n) => (tax.content10To22.get(n.code) ?? []).map((id) => byKey.get(String(id)) ?? -1).filter((i) => i >= 0));
  const starts = new Int32Array(perNode.length + 1);
  perNode.forEach((t, i) => (starts[i + 1] = starts[i]! + t.length));
  const position = new Map(tax.content10.map((n, i) => [n.code, i]));
  const parents = Int32Array.from(tax.content10, (n) => (n.parentCode ? (position.get(n.parentCode) ?? -1) : -1));
  index = { nodes: tax.content10, starts, targets: Int32Array.from(perNode.flat()), parents };
  content10Indices.set(set, index);
  return index;
}

/** Scores of every Content 1.0 code, in the taxonomy's order. */
export function content10Scores(set: LabelSet, probs: Float32Array): { nodes: Content10Node[]; scores: Float32Array } {
  const { nodes, starts, targets, parents } = content10Index(set);
  const scores = new Float32Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    for (let t = starts[i]!; t < starts[i + 1]!; t++) if (probs[targets[t]!]! > scores[i]!) scores[i] = probs[targets[t]!]!;
  }
  for (let i = 0; i < nodes.length; i++) {
    const parent = parents[i]!;
    if (parent !== -1 && scores[i]! > scores[parent]!) scores[parent] = scores[i]!;
  }
  return { nodes, scores };
}

/** `{id, parent_id, name, tier1_name, tier2_name?, …, score}` (parent_id 0 for tier 1). */
function treeEntry(label: Label, score: number): Record<string, unknown> {
  const node = label.node!;
  const entry: Record<string, unknown> = { id: node.id, parent_id: node.parentId ?? 0, name: label.name };
  label.path.forEach((tier, i) => (entry[`tier${i + 1}_name`] = tier));
  entry.score = score;
  return entry;
}

function picks(manifest: PackManifest, list: OutputList, probs: Float32Array, allowed?: Uint8Array): number[] {
  const { topK: k, minScore } = outputLimits(manifest, list);
  return topK(probs, k, minScore, allowed);
}

/**
 * Labels the tree lists name (1) or not (0): those with integer ids (digest §1.3). The
 * Sensitive Topics branch (alphanumeric ids) is scored for the decision route's
 * brand-safety questions and listed by no classifier. Computed once per set.
 */
const listableMasks = new WeakMap<LabelSet, Uint8Array>();
function listable(set: LabelSet): Uint8Array {
  let mask = listableMasks.get(set);
  if (!mask) {
    mask = Uint8Array.from(set.labels, (l) => (typeof l.node?.id === 'number' ? 1 : 0));
    listableMasks.set(set, mask);
  }
  return mask;
}

function treeList(manifest: PackManifest, scores: PackScores, set: 'iab_content_2_2' | 'iab_audience_1_1', detailed: boolean, round: Round) {
  const s = scores.sets.get(set);
  if (!s) return [];
  return picks(manifest, set === 'iab_content_2_2' ? 'iab_2_2' : 'audience', s.probs, listable(s.set)).map((i) =>
    detailed ? treeEntry(s.set.labels[i]!, round(s.probs[i]!)) : { name: s.set.labels[i]!.name, score: round(s.probs[i]!) },
  );
}

function content10List(manifest: PackManifest, scores: PackScores, detailed: boolean, round: Round) {
  const s = scores.sets.get('iab_content_2_2')!;
  const { nodes, scores: p } = content10Scores(s.set, s.probs);
  return picks(manifest, 'iab_1_0', p).map((i) => {
    const n = nodes[i]!;
    const score = round(p[i]!);
    return detailed ? { code: n.code, name: n.name, tier: n.tier, parent_code: n.parentCode, score } : { name: n.name, score };
  });
}

function enrichedFields(e: Enrichment, round: Round) {
  return {
    topics: e.topics.map((t) => ({ name: t.phrase.toLowerCase(), score: round(t.score) })),
    keywords: e.keywords,
    user_intent: { name: e.intent.name, category: e.intent.category, score: round(e.intent.score) },
  };
}

/** The JSON object an IAB pack answers with (serialised into the message content by the route). */
export function iabResult(manifest: PackManifest, scores: PackScores, enrichment: Enrichment | null): Record<string, unknown> {
  switch (manifest.kind) {
    case 'iab-edge':
      return {
        audience: treeList(manifest, scores, 'iab_audience_1_1', false, round4),
        content: { iab_1_0: content10List(manifest, scores, false, round4), iab_2_2: treeList(manifest, scores, 'iab_content_2_2', false, round4) },
      };
    case 'iab-domain':
      return {
        content: { iab_1_0: content10List(manifest, scores, false, round4), iab_2_2: treeList(manifest, scores, 'iab_content_2_2', false, round4) },
        ...enrichedFields(enrichment!, round4),
      };
    case 'iab-enriched':
    case 'iab-multi': {
      // The multi-IAB model answers full-precision floats (digest §1.3).
      const round = manifest.kind === 'iab-multi' ? exact : round4;
      return {
        audience: treeList(manifest, scores, 'iab_audience_1_1', true, round),
        content: { iab_1_0: content10List(manifest, scores, true, round), iab_2_2: treeList(manifest, scores, 'iab_content_2_2', true, round) },
        ...enrichedFields(enrichment!, round),
      };
    }
    default:
      throw new Error(`pack kind ${manifest.kind} has no IAB output`);
  }
}

/** Moderation: every category in OpenAI's order, decided by its threshold; flagged if any is. */
export function moderationResult(manifest: PackManifest, scores: PackScores): ModerationResult {
  const categories = scores.sets.get('moderation')!;
  const unsafe = scores.sets.get('unsafe')!;
  const categoryScores: Record<string, number> = {};
  const decided: Record<string, boolean> = {};
  const byKey = new Map(categories.set.labels.map((l, i) => [l.key, i]));
  for (const { name } of MODERATION_LABELS) {
    const score = round4(categories.probs[byKey.get(name)!]!);
    categoryScores[name] = score;
    decided[name] = score >= (manifest.thresholds?.[name] ?? 0.5);
  }
  return { categoryScores, categories: decided, flagged: Object.values(decided).some(Boolean), unsafeScore: round4(unsafe.probs[0]!) };
}

/**
 * The label sets a classifier pack scores: the two IAB trees (Content 2.2, Audience 1.1),
 * the 13 moderation categories in OpenAI's order plus the binary unsafe head, and the
 * four user intents. Each label carries the text that is embedded for zero-shot scoring
 * (name, tier path, description) and its parent's index, so a branch rolls up.
 */
import { MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';
import type { TaxonomyNode } from './taxonomy.types.js';

export const LABEL_SET_NAMES = ['iab_content_2_2', 'iab_audience_1_1', 'moderation', 'unsafe', 'user_intent'] as const;
export type LabelSetName = (typeof LABEL_SET_NAMES)[number];

export interface Label {
  /** Stable key within the set: the taxonomy id as a string ("236", "v9i3On"), or the category name. */
  key: string;
  name: string;
  /** Tier names from the root down ([name] for flat sets). */
  path: string[];
  /** What is embedded for zero-shot scoring. */
  text: string;
  /** Index of the parent label in the same set, or -1. */
  parent: number;
  node?: TaxonomyNode;
}

export interface LabelSet {
  name: LabelSetName;
  labels: Label[];
  /** Whether labels form a tree (scores roll up to parents). */
  tree: boolean;
}

/** What each moderation category covers: the text its label is embedded from. */
const MODERATION_DESCRIPTIONS: Readonly<Record<ModerationCategory, string>> = {
  'harassment': 'content that expresses, incites or promotes harassing language towards any target',
  'harassment/threatening': 'harassment that also includes violence or serious harm towards any target',
  'hate': 'content that expresses, incites or promotes hate based on race, gender, ethnicity, religion, nationality, sexual orientation, disability or caste',
  'hate/threatening': 'hateful content that also includes violence or serious harm towards the targeted group',
  'illicit': 'content that gives advice or instruction on how to commit illicit acts, such as shoplifting',
  'illicit/violent': 'illicit content that also includes references to violence or procuring a weapon',
  'self-harm': 'content that promotes, encourages or depicts acts of self-harm, such as suicide, cutting and eating disorders',
  'self-harm/intent': 'content where the speaker expresses that they are engaging or intend to engage in acts of self-harm',
  'self-harm/instructions': 'content that encourages performing acts of self-harm or gives instructions on how to commit them',
  'sexual': 'content meant to arouse sexual excitement, such as the description of sexual activity',
  'sexual/minors': 'sexual content that includes an individual who is under 18 years old',
  'violence': 'content that depicts death, violence or physical injury',
  'violence/graphic': 'content that depicts death, violence or physical injury in graphic detail',
};

/** The categories in the order `/v1/moderations` answers them (the domain's MODERATION_CATEGORIES), each with its description. */
export const MODERATION_LABELS: readonly { name: string; description: string }[] = MODERATION_CATEGORIES.map((name) => ({
  name,
  description: MODERATION_DESCRIPTIONS[name],
}));

export const USER_INTENTS: readonly { name: string; description: string }[] = [
  { name: 'informational', description: 'the reader wants to learn or understand something' },
  { name: 'navigational', description: 'the reader wants to reach a specific website, brand or page' },
  { name: 'transactional', description: 'the reader wants to buy, subscribe, download or sign up now' },
  { name: 'commercial', description: 'the reader is comparing products or services before a purchase' },
];

/**
 * Content 2.2's Brand Suitability and Risk levels (Floor, High, Medium, Low Risk) grade a
 * Sensitive Topic for a buyer; they are not something a text is about.
 */
const NOT_TOPICS = 'Brand Suitability and Risk';

function treeSet(name: LabelSetName, nodes: readonly TaxonomyNode[]): LabelSet {
  // Extension placeholders ("*Country Extension") are slots for values, not segments.
  const kept = nodes.filter((n) => !n.name.startsWith('*') && n.tiers[0] !== NOT_TOPICS);
  const index = new Map(kept.map((n, i) => [n.id, i]));
  const labels = kept.map((node): Label => {
    const path = node.tiers[node.tiers.length - 1] === node.name ? node.tiers : [...node.tiers, node.name];
    return { key: String(node.id), name: node.name, path, text: path.join(' > '), parent: index.get(node.parentId ?? -1) ?? -1, node };
  });
  return { name, labels, tree: true };
}

function flatSet(name: LabelSetName, entries: readonly { name: string; description: string }[]): LabelSet {
  return {
    name,
    labels: entries.map((e) => ({ key: e.name, name: e.name, path: [e.name], text: `${e.name}: ${e.description}`, parent: -1 })),
    tree: false,
  };
}

/** The tree taxonomies the IAB label sets are built from. */
export interface IabTrees {
  content22: readonly TaxonomyNode[];
  audience11: readonly TaxonomyNode[];
}

/** The label set named `name`; `trees` is read only for the two IAB sets. */
export function buildLabelSet(name: LabelSetName, trees: () => IabTrees): LabelSet {
  switch (name) {
    case 'iab_content_2_2':
      return treeSet(name, trees().content22);
    case 'iab_audience_1_1':
      return treeSet(name, trees().audience11);
    case 'moderation':
      return flatSet(name, MODERATION_LABELS);
    case 'unsafe':
      return flatSet(name, [{ name: 'unsafe', description: 'harmful, abusive, hateful, sexual, violent, illegal or self-harm content' }]);
    case 'user_intent':
      return flatSet(name, USER_INTENTS);
  }
}

/**
 * The index of the label `query` names in `set`, matched case-insensitively by key (the
 * taxonomy id), name, or tier path ("Sports > Soccer" or "Sports/Soccer"); -1 if none.
 * A bare name shared by several nodes resolves to the shallowest.
 */
export function findLabel(set: LabelSet, query: string): number {
  const q = query.trim().toLowerCase();
  const asPath = q.split(/\s*[>/|]\s*/).join(' > ');
  let best = -1;
  set.labels.forEach((label, i) => {
    if (label.key.toLowerCase() === q || label.path.join(' > ').toLowerCase() === asPath) {
      if (best === -1 || label.path.length < set.labels[best]!.path.length || label.key.toLowerCase() === q) best = i;
      return;
    }
    if (label.name.toLowerCase() === q && (best === -1 || label.path.length < set.labels[best]!.path.length)) best = i;
  });
  return best;
}

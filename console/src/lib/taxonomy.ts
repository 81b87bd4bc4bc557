/**
 * The classification playground's reading of a `zlm-*` answer (the JSON string in
 * `choices[0].message.content`): its flat label lists made into taxonomy trees. Entries
 * that name their tiers (`tier1_name`, `tier2_name`, …: the enriched and multi-IAB models)
 * or their parent (`parent_code`: Content 1.0) nest under their ancestors; a listed entry's
 * ancestor the answer does not list appears without a score. Plain `{name, score}` entries
 * (`zlm-v1-iab-classify-edge`, the domain classifier) name no tier, so they stay flat.
 */
export interface TreeNode {
  /** Unique within its tree: the tier path. */
  key: string;
  name: string;
  /** The answer's score, or null for an ancestor the answer does not list. */
  score: number | null;
  children: TreeNode[];
}

export interface ScoreTree {
  id: string;
  title: string;
  nodes: TreeNode[];
}

export interface ClassificationView {
  trees: ScoreTree[];
  topics: Array<{ name: string; score: number }>;
  keywords: string[];
  intent: { name: string; category: string; score: number } | null;
}

type Entry = Record<string, unknown>;

const isEntry = (x: unknown): x is Entry => typeof x === 'object' && x !== null && !Array.isArray(x);
const entries = (x: unknown): Entry[] => (Array.isArray(x) ? x.filter(isEntry) : []);
const scoreOf = (e: Entry): number | null => (typeof e.score === 'number' ? e.score : null);

/** The tier path of an entry: its `tierN_name` fields in order, else its parent's name and its own, else its name. */
function pathOf(entry: Entry, byCode: Map<string, Entry>): string[] {
  const tiers: string[] = [];
  for (let n = 1; typeof entry[`tier${n}_name`] === 'string'; n++) tiers.push(entry[`tier${n}_name`] as string);
  if (tiers.length > 0) return tiers;
  const name = String(entry.name ?? entry.code ?? '?');
  if (typeof entry.parent_code === 'string') {
    const parent = byCode.get(entry.parent_code);
    return [parent ? String(parent.name) : entry.parent_code, name];
  }
  return [name];
}

/** Best score in a branch: how siblings are ordered (an unlisted ancestor ranks by its best descendant). */
function best(node: TreeNode): number {
  return Math.max(node.score ?? -1, ...node.children.map(best));
}

function sortTree(nodes: TreeNode[]): TreeNode[] {
  for (const node of nodes) sortTree(node.children);
  return nodes.sort((a, b) => best(b) - best(a));
}

function freshKey(key: string, taken: Map<string, unknown>): string {
  let n = 2;
  while (taken.has(`${key} #${n}`)) n++;
  return `${key} #${n}`;
}

/** Nests a flat list of scored entries by their tier paths. */
export function buildTree(list: unknown): TreeNode[] {
  const items = entries(list);
  const byCode = new Map(items.filter((e) => typeof e.code === 'string').map((e) => [e.code as string, e]));
  const roots: TreeNode[] = [];
  const byKey = new Map<string, TreeNode>();
  for (const entry of items) {
    const path = pathOf(entry, byCode);
    let siblings = roots;
    let node: TreeNode | undefined;
    for (const [depth, name] of path.entries()) {
      let key = path.slice(0, depth + 1).join(' > ');
      node = byKey.get(key);
      // Two listed entries on one path (a leaf name shared by two branches of a flat list) stay two rows.
      if (node && depth === path.length - 1 && node.score !== null) {
        key = freshKey(key, byKey);
        node = undefined;
      }
      if (!node) {
        node = { key, name, score: null, children: [] };
        byKey.set(key, node);
        siblings.push(node);
      }
      siblings = node.children;
    }
    if (node) node.score = scoreOf(entry);
  }
  return sortTree(roots);
}

/** Every tree and list of a classification answer, in the answer's order. */
export function classificationView(answer: unknown): ClassificationView {
  const result = isEntry(answer) ? answer : {};
  const content = isEntry(result.content) ? result.content : {};
  const trees: ScoreTree[] = [];
  if ('audience' in result) trees.push({ id: 'audience', title: 'Audience 1.1', nodes: buildTree(result.audience) });
  if ('iab_2_2' in content) trees.push({ id: 'iab_2_2', title: 'Content 2.2', nodes: buildTree(content.iab_2_2) });
  if ('iab_1_0' in content) trees.push({ id: 'iab_1_0', title: 'Content 1.0', nodes: buildTree(content.iab_1_0) });
  const topics = entries(result.topics).map((t) => ({ name: String(t.name), score: scoreOf(t) ?? 0 }));
  const keywords = Array.isArray(result.keywords) ? result.keywords.map(String) : [];
  const i = isEntry(result.user_intent) ? result.user_intent : null;
  const intent = i ? { name: String(i.name ?? ''), category: String(i.category ?? ''), score: scoreOf(i) ?? 0 } : null;
  return { trees, topics, keywords, intent };
}

/** Every key of a tree that has children: what "expand all" opens. */
export function branchKeys(nodes: TreeNode[]): string[] {
  return nodes.flatMap((n) => (n.children.length > 0 ? [n.key, ...branchKeys(n.children)] : []));
}

/** The zlm classifiers a classification playground offers: served on chat completions (not moderation-only). */
export const isClassifier = (model: { id: string; routes: string[] }): boolean =>
  model.id.toLowerCase().startsWith('zlm-') && model.routes.includes('/v1/chat/completions');

/**
 * The IAB Tech Lab taxonomies the classifier packs label content with, parsed from the
 * official TSV files the project ships in `assets/iab/` (CC BY 3.0, see ATTRIBUTION.md):
 * Content 2.2 and Audience 1.1 (unique ids, parent ids, tier names; ids are numbers,
 * except Content 2.2's Sensitive Topics and Brand Suitability rows, whose ids are
 * alphanumeric strings such as "v9i3On"), Content 1.0
 * (`IAB<n>[-<m>]` codes) and the official 1.0 → 2.x mappings, so `iab_1_0` scores come
 * from the 2.2 scores of the nodes each 1.0 code maps to.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaxonomyId, TaxonomyNode } from '../../domain/shared/classification/taxonomy.types.js';

export interface Taxonomy {
  name: string;
  nodes: TaxonomyNode[];
  byId: ReadonlyMap<TaxonomyId, TaxonomyNode>;
}

export interface Content10Node {
  code: string;
  name: string;
  tier: 1 | 2;
  parentCode: string | null;
}

export const TAXONOMY_FILES = {
  content22: 'Content-Taxonomy-2.2.tsv',
  audience11: 'Audience-Taxonomy-1.1.tsv',
  content10: 'Content-Taxonomy-1.0.tsv',
  map10to20: 'Content-1.0-to-Content-2.0.tsv',
  map10to21: 'Content-2.0-to-Content-2.1.tsv',
} as const;

/** `assets/iab` of the installed package: the nearest ancestor holding it (src/ and dist/src/ differ in depth). */
export function defaultTaxonomyDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'assets', 'iab');
    if (existsSync(path.join(candidate, TAXONOMY_FILES.content22))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('the IAB taxonomy files (assets/iab) are missing from this installation');
    dir = parent;
  }
}

function rows(text: string): string[][] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split('\t').map((cell) => cell.trim()));
}

const isId = (cell: string | undefined): boolean => cell !== undefined && /^\d+$/.test(cell);

function buildTaxonomy(name: string, nodes: TaxonomyNode[]): Taxonomy {
  return { name, nodes, byId: new Map(nodes.map((n) => [n.id, n])) };
}

/** A Content 2.2 id cell: digits (kept as a number) or a letters-and-digits code (kept as a string). */
const content22Id = (cell: string | undefined): TaxonomyId | null =>
  cell === undefined || !/^[A-Za-z0-9]+$/.test(cell) ? null : /^\d+$/.test(cell) ? Number(cell) : cell;

/**
 * Columns: Unique ID, Parent, Name, Tier 1…4 (two header rows, whose first cells have
 * spaces). A row whose tier columns stop above its own tier (the Sensitive Topics and
 * Brand Suitability rows name only their tier 1, their roots none) takes its parent's
 * tiers plus its name, so its tier is its depth.
 */
export function parseContent22(text: string): Taxonomy {
  const nodes: TaxonomyNode[] = [];
  for (const cells of rows(text)) {
    const id = content22Id(cells[0]);
    if (id === null || !cells[2]) continue;
    nodes.push({ id, parentId: content22Id(cells[1]), name: cells[2], tiers: cells.slice(3, 7).filter((t) => t !== '') });
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const settled = new Set<TaxonomyNode>();
  const settle = (node: TaxonomyNode): string[] => {
    if (settled.has(node)) return node.tiers;
    settled.add(node);
    const parent = node.parentId === null ? undefined : byId.get(node.parentId);
    const above = parent ? settle(parent) : [];
    if (node.tiers.length <= above.length) node.tiers = [...above, node.name];
    return node.tiers;
  };
  nodes.forEach(settle);
  return buildTaxonomy('IAB Content Taxonomy 2.2', nodes);
}

/** Columns: (blank), Unique ID, Parent ID, Condensed Name, Tier 1…6, Extension Notes. */
export function parseAudience11(text: string): Taxonomy {
  const nodes: TaxonomyNode[] = [];
  for (const cells of rows(text)) {
    if (!isId(cells[1])) continue;
    const tiers = cells.slice(4, 10).filter((t) => t !== '');
    nodes.push({ id: Number(cells[1]), parentId: isId(cells[2]) ? Number(cells[2]) : null, name: tiers[tiers.length - 1]!, tiers });
  }
  return buildTaxonomy('IAB Audience Taxonomy 1.1', nodes);
}

/** Columns: IAB Code, Tier ("Tier 1"/"Tier 2"), IAB Category. */
export function parseContent10(text: string): Content10Node[] {
  const nodes: Content10Node[] = [];
  for (const cells of rows(text)) {
    const code = cells[0]!;
    if (!/^IAB\d+(-\d+)?$/.test(code)) continue;
    const tier = code.includes('-') ? 2 : 1;
    nodes.push({ code, name: cells[2]!, tier, parentCode: tier === 2 ? code.split('-')[0]! : null });
  }
  return nodes;
}

/**
 * Content 1.0 code → Content 2.x ids, from both official mapping files: "1.0 to 2.0"
 * (code in column 1, 2.0 id in column 4) and the one named "2.0 to 2.1", which maps the
 * old RTB code (column 2) to the new id (column 1).
 */
export function parseContent10Mappings(map10to20: string, map10to21: string): Map<string, number[]> {
  const map = new Map<string, Set<number>>();
  const add = (code: string | undefined, id: string | undefined) => {
    if (!code || !/^IAB\d+(-\d+)?$/.test(code) || !isId(id)) return;
    let ids = map.get(code);
    if (!ids) map.set(code, (ids = new Set()));
    ids.add(Number(id));
  };
  for (const cells of rows(map10to20)) add(cells[0], cells[3]);
  for (const cells of rows(map10to21)) add(cells[1], cells[0]);
  return new Map([...map].map(([code, ids]) => [code, [...ids]]));
}

export interface IabTaxonomies {
  content22: Taxonomy;
  audience11: Taxonomy;
  content10: Content10Node[];
  /** Content 1.0 code → the Content 2.2 ids it maps to (ids absent from 2.2 dropped). */
  content10To22: ReadonlyMap<string, number[]>;
}

const loaded = new Map<string, IabTaxonomies>();

/** Parses the taxonomy files of `dir` (default: the shipped copy); memoised per directory. */
export function loadIabTaxonomies(dir: string = defaultTaxonomyDir()): IabTaxonomies {
  const cached = loaded.get(dir);
  if (cached) return cached;
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  const content22 = parseContent22(read(TAXONOMY_FILES.content22));
  const mappings = parseContent10Mappings(read(TAXONOMY_FILES.map10to20), read(TAXONOMY_FILES.map10to21));
  const content10To22 = new Map<string, number[]>();
  for (const [code, ids] of mappings) {
    const present = ids.filter((id) => content22.byId.has(id));
    if (present.length > 0) content10To22.set(code, present);
  }
  const result: IabTaxonomies = {
    content22,
    audience11: parseAudience11(read(TAXONOMY_FILES.audience11)),
    content10: parseContent10(read(TAXONOMY_FILES.content10)),
    content10To22,
  };
  loaded.set(dir, result);
  return result;
}

/**
 * The nodes of the IAB tree taxonomies (Content 2.2, Audience 1.1) the label sets are
 * built from; src/inference/classifier/taxonomy.ts parses them from the shipped files.
 */
/** A taxonomy's unique id: a number, or an alphanumeric string (Content 2.2's Sensitive Topics). */
export type TaxonomyId = number | string;

export interface TaxonomyNode {
  id: TaxonomyId;
  /** null for a tier-1 node. */
  parentId: TaxonomyId | null;
  name: string;
  /** Tier names from tier 1 down to this node (its tier is `tiers.length`). */
  tiers: string[];
}

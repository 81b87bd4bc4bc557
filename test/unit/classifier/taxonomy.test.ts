import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultTaxonomyDir, loadIabTaxonomies, type Taxonomy } from '../../../src/inference/classifier/taxonomy.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';
import { labelSet } from '../../../src/inference/classifier/label-set-loader.js';

function perTier(t: Taxonomy): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const n of t.nodes) counts[n.tiers.length] = (counts[n.tiers.length] ?? 0) + 1;
  return counts;
}

describe('the shipped IAB taxonomies (assets/iab)', () => {
  const tax = loadIabTaxonomies();

  it('ships the files with their CC BY 3.0 attribution', () => {
    expect(existsSync(path.join(defaultTaxonomyDir(), 'ATTRIBUTION.md'))).toBe(true);
  });

  it('parses Content 2.2: 1,196 nodes by tier, ids and parent ids', () => {
    expect(tax.content22.nodes).toHaveLength(1196);
    expect(perTier(tax.content22)).toEqual({ 1: 37, 2: 575, 3: 524, 4: 60 });
    expect(tax.content22.byId.get(236)).toEqual({ id: 236, parentId: 232, name: 'Physical Therapy', tiers: ['Healthy Living', 'Wellness', 'Physical Therapy'] });
    expect(tax.content22.byId.get(286)).toMatchObject({ parentId: null, name: 'Medical Health', tiers: ['Medical Health'] });
    for (const n of tax.content22.nodes) if (n.parentId !== null) expect(tax.content22.byId.has(n.parentId)).toBe(true);
  });

  it('parses the Sensitive Topics and Brand Suitability rows of Content 2.2: string ids, parents, tiers down to the node', () => {
    const ids = (root: string) => tax.content22.nodes.filter((n) => n.parentId === root).map((n) => n.id);
    expect(tax.content22.byId.get('v9i3On')).toEqual({ id: 'v9i3On', parentId: null, name: 'Sensitive Topics', tiers: ['Sensitive Topics'] });
    expect(tax.content22.byId.get('avbNf2')).toEqual({ id: 'avbNf2', parentId: 'v9i3On', name: 'Arms & Ammunition', tiers: ['Sensitive Topics', 'Arms & Ammunition'] });
    expect(ids('v9i3On')).toHaveLength(11);
    expect(tax.content22.byId.get('MRkz4Q')).toMatchObject({ parentId: null, name: 'Brand Suitability and Risk' });
    expect(ids('MRkz4Q')).toEqual(['bsr001', 'bsr002', 'bsr003', 'bsr004']);
    // Numeric ids stay numbers (the 1.0 mappings and the outputs' integer ids read them).
    expect(tax.content22.nodes.filter((n) => typeof n.id === 'string')).toHaveLength(17);
  });

  it('parses Audience 1.1: 1,558 nodes down to tier 6', () => {
    expect(tax.audience11.nodes).toHaveLength(1558);
    expect(perTier(tax.audience11)).toEqual({ 1: 3, 2: 70, 3: 589, 4: 466, 5: 166, 6: 264 });
    expect(tax.audience11.byId.get(703)).toEqual({ id: 703, parentId: 687, name: 'Consumer Electronics', tiers: ['Interest', 'Technology & Computing', 'Consumer Electronics'] });
  });

  it('parses Content 1.0 codes and maps them to 2.2 ids through the official mappings', () => {
    expect(tax.content10).toHaveLength(392);
    expect(tax.content10.filter((n) => n.tier === 1)).toHaveLength(26);
    expect(tax.content10.find((n) => n.code === 'IAB19-6')).toEqual({ code: 'IAB19-6', name: 'Cell Phones', tier: 2, parentCode: 'IAB19' });
    expect(tax.content10To22.get('IAB12')).toEqual([379]);
    expect(tax.content22.byId.get(379)!.name).toBe('News and Politics');
    expect(tax.content10To22.size).toBe(378);
  });

  it('label sets drop extension placeholders and keep parents; labels are found by id, name or path', () => {
    const audience = labelSet('iab_audience_1_1');
    expect(audience.labels.some((l) => l.name.startsWith('*'))).toBe(false);
    const content = labelSet('iab_content_2_2');
    // The Brand Suitability and Risk levels grade a topic; they are not labels.
    expect(content.labels).toHaveLength(1191);
    expect(content.labels.some((l) => l.path[0] === 'Brand Suitability and Risk')).toBe(false);
    const arms = findLabel(content, 'Sensitive Topics > Arms & Ammunition');
    expect(content.labels[arms]).toMatchObject({ key: 'avbNf2', name: 'Arms & Ammunition', text: 'Sensitive Topics > Arms & Ammunition' });
    expect(content.labels[content.labels[arms]!.parent]).toMatchObject({ key: 'v9i3On', parent: -1 });
    expect(findLabel(content, 'avbnf2')).toBe(arms);
    const pt = findLabel(content, 'healthy living > wellness > physical therapy');
    expect(content.labels[pt]!.key).toBe('236');
    expect(findLabel(content, 'Healthy Living/Wellness/Physical Therapy')).toBe(pt);
    expect(findLabel(content, 'PHYSICAL THERAPY')).toBe(pt);
    expect(findLabel(content, '236')).toBe(pt);
    expect(content.labels[content.labels[pt]!.parent]!.name).toBe('Wellness');
    expect(findLabel(content, 'no such label')).toBe(-1);
  });
});

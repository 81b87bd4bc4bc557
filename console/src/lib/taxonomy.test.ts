import { describe, expect, it } from 'vitest';
import { branchKeys, buildTree, classificationView, isClassifier, type TreeNode } from './taxonomy.js';

/** A tree as `name score [children]`, for exact comparison. */
const shape = (nodes: TreeNode[]): unknown[] => nodes.map((n) => (n.children.length ? [n.name, n.score, shape(n.children)] : [n.name, n.score]));

describe('classification trees', () => {
  it('nests tiered entries by their tier names, an unlisted ancestor without a score, branches by best score', () => {
    const tree = buildTree([
      { id: 483, parent_id: 0, name: 'Sports', tier1_name: 'Sports', score: 0.9 },
      { id: 533, parent_id: 483, name: 'Soccer', tier1_name: 'Sports', tier2_name: 'Soccer', score: 0.8 },
      { id: 40, parent_id: 30, name: 'Coffee', tier1_name: 'Food & Drink', tier2_name: 'Non-Alcoholic Beverages', tier3_name: 'Coffee', score: 0.95 },
      { id: 484, parent_id: 483, name: 'Tennis', tier1_name: 'Sports', tier2_name: 'Tennis', score: 0.85 },
    ]);
    expect(shape(tree)).toEqual([
      ['Food & Drink', null, [['Non-Alcoholic Beverages', null, [['Coffee', 0.95]]]]],
      ['Sports', 0.9, [['Tennis', 0.85], ['Soccer', 0.8]]],
    ]);
    expect(tree[0]!.children[0]!.children[0]!.key).toBe('Food & Drink > Non-Alcoholic Beverages > Coffee');
    expect(branchKeys(tree)).toEqual(['Food & Drink', 'Food & Drink > Non-Alcoholic Beverages', 'Sports']);
  });

  it('nests Content 1.0 codes under their parent code, named when the parent is listed', () => {
    const tree = buildTree([
      { code: 'IAB17', name: 'Sports', tier: 1, parent_code: null, score: 0.7 },
      { code: 'IAB17-44', name: 'Soccer', tier: 2, parent_code: 'IAB17', score: 0.6 },
      { code: 'IAB8-5', name: 'Cocktails/Beer', tier: 2, parent_code: 'IAB8', score: 0.65 },
    ]);
    expect(shape(tree)).toEqual([
      ['Sports', 0.7, [['Soccer', 0.6]]],
      ['IAB8', null, [['Cocktails/Beer', 0.65]]],
    ]);
  });

  it('keeps plain {name, score} lists flat, two entries with one name as two rows', () => {
    const tree = buildTree([
      { name: 'Soccer', score: 0.5 },
      { name: 'Other', score: 0.4 },
      { name: 'Other', score: 0.3 },
    ]);
    expect(shape(tree)).toEqual([
      ['Soccer', 0.5],
      ['Other', 0.4],
      ['Other', 0.3],
    ]);
    expect(tree.map((n) => n.key)).toEqual(['Soccer', 'Other', 'Other #2']);
    expect(buildTree('not a list')).toEqual([]);
  });

  it('reads every part of an enriched answer, and only the lists an answer has', () => {
    const view = classificationView({
      audience: [{ id: 1, parent_id: 0, name: 'Interest', tier1_name: 'Interest', score: 0.5 }],
      content: { iab_1_0: [{ code: 'IAB1', name: 'Arts', tier: 1, parent_code: null, score: 0.2 }], iab_2_2: [] },
      topics: [{ name: 'cars', score: 0.61 }],
      keywords: ['sedan', 'range'],
      user_intent: { name: 'electric sedan', category: 'commercial', score: 0.4 },
    });
    expect(view.trees.map((t) => [t.id, t.title, t.nodes.length])).toEqual([
      ['audience', 'Audience 1.1', 1],
      ['iab_2_2', 'Content 2.2', 0],
      ['iab_1_0', 'Content 1.0', 1],
    ]);
    expect(view.topics).toEqual([{ name: 'cars', score: 0.61 }]);
    expect(view.keywords).toEqual(['sedan', 'range']);
    expect(view.intent).toEqual({ name: 'electric sedan', category: 'commercial', score: 0.4 });
    const domain = classificationView({ content: { iab_1_0: [], iab_2_2: [] }, topics: [], keywords: [], user_intent: null });
    expect(domain.trees.map((t) => t.id)).toEqual(['iab_2_2', 'iab_1_0']);
    expect(domain.intent).toBeNull();
  });

  it('offers the zlm models served on chat completions, not the moderation-only one', () => {
    expect(isClassifier({ id: 'zlm-v1-iab-classify-edge', routes: ['/v1/chat/completions', '/v1/responses', '/v1/systemone'] })).toBe(true);
    expect(isClassifier({ id: 'zlm-v1-moderation-edge', routes: ['/v1/moderations', '/v1/systemone'] })).toBe(false);
    expect(isClassifier({ id: 'deberta-v3-small', routes: ['/v1/chat/completions'] })).toBe(false);
  });
});

/** How questions are planned (rules 3–5) on the real label sets: recognised wordings and what falls to zero-shot. */
import { describe, expect, it } from 'vitest';
import { planQuestion, zeroShotTexts } from '../../../src/domain/decision/plan.js';
import { findLabel, labelSet } from '../../../src/inference/classifier/label-sets.js';
import type { DecisionQuestion } from '../../../src/domain/decision/validation.js';

const iab = [labelSet('iab_content_2_2'), labelSet('iab_audience_1_1')];
const moderation = [labelSet('moderation'), labelSet('unsafe')];
const noul = (instructions: string | null, criteria: { true: string | null; false: string | null } | null = null): DecisionQuestion => ({ type: 'noul', instructions, criteria });
const choice = (...names: string[]): DecisionQuestion => ({ type: 'choice', instructions: null, criteria: names.map((name) => ({ name, description: null })) });
const content = (name: string) => ({ set: 'iab_content_2_2', index: findLabel(labelSet('iab_content_2_2'), name) });

describe('planQuestion', () => {
  it('a choice of labels (names, tier paths, any case; the audience star optional) is label-mapped', () => {
    expect(planQuestion(choice('automotive', 'Sports > Soccer'), iab, true)).toEqual({ kind: 'labels', refs: [content('Automotive'), content('Sports > Soccer')] });
    expect(planQuestion(choice('Purchase Intent'), iab, true)).toEqual({
      kind: 'labels',
      refs: [{ set: 'iab_audience_1_1', index: findLabel(labelSet('iab_audience_1_1'), 'Purchase Intent*') }],
    });
  });

  it('one option outside the labels, or bare numbers (never taxonomy ids), make the choice zero-shot', () => {
    expect(planQuestion(choice('Automotive', 'Something else'), iab, true)).toEqual({ kind: 'zero_shot_options', texts: ['Automotive', 'Something else'] });
    expect(planQuestion(choice('1', '2'), iab, true)).toEqual({ kind: 'zero_shot_options', texts: ['1', '2'] });
  });

  it('a noul naming a label, directly or as "Is this about X?" / "Does it mention X?"', () => {
    for (const q of ['Is this about Automotive?', 'automotive', 'Does it mention the Automotive.', 'Is the article related to automotive?']) {
      expect(planQuestion(noul(q), iab, true)).toEqual({ kind: 'labels', refs: [content('Automotive')] });
    }
    expect(planQuestion(noul('Is this hate?'), moderation, false)).toEqual({ kind: 'labels', refs: [{ set: 'moderation', index: 2 }] });
    expect(planQuestion(noul('Is this positive?'), moderation, false)).toEqual({ kind: 'zero_shot_yes', text: 'Is this positive?' });
    expect(planQuestion(noul('hate/threatening'), moderation, false)).toEqual({ kind: 'labels', refs: [{ set: 'moderation', index: 3 }] });
  });

  it('brand safety and purchase intent wordings on IAB models only', () => {
    expect(planQuestion(noul('Is this page brand safe?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: false });
    expect(planQuestion(noul('Is it safe for advertisers?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: false });
    expect(planQuestion(noul('Is this a brand-safety risk?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: true });
    expect(planQuestion(noul('Is this NOT brand safe?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: true });
    expect(planQuestion(noul('Does the reader show purchase intent?'), iab, true)).toEqual({ kind: 'purchase_intent' });
    expect(planQuestion(noul('Is the visitor ready to buy?'), iab, true)).toEqual({ kind: 'purchase_intent' });
    expect(planQuestion(noul('Is this page brand safe?'), moderation, false)).toEqual({ kind: 'zero_shot_yes', text: 'Is this page brand safe?' });
  });

  it('zero-shot nouls: both criteria texts as options, else the yes text or the instructions, else nothing', () => {
    expect(planQuestion(noul('Happy?', { true: 'joyful', false: 'sad' }), iab, true)).toEqual({ kind: 'zero_shot_options', texts: ['joyful', 'sad'] });
    expect(planQuestion(noul('Happy?', { true: 'joyful', false: null }), iab, true)).toEqual({ kind: 'zero_shot_yes', text: 'joyful' });
    expect(planQuestion(noul(null), iab, true)).toEqual({ kind: 'zero_shot_yes', text: null });
  });

  it('scores are zero-shot over their levels (objects as JSON); texts to embed are listed once', () => {
    const score: DecisionQuestion = { type: 'score', instructions: null, criteria: ['low', { v: 'high' }] };
    const plan = planQuestion(score, iab, true);
    expect(plan).toEqual({ kind: 'zero_shot_options', texts: ['low', '{"v":"high"}'] });
    expect(zeroShotTexts([plan, plan, { kind: 'zero_shot_yes', text: 'low' }, { kind: 'zero_shot_yes', text: null }])).toEqual(['low', '{"v":"high"}']);
  });
});

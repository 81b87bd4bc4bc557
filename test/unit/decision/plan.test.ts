/** How questions are planned (rules 3–5) on the real label sets: recognised wordings and what falls to zero-shot. */
import { describe, expect, it } from 'vitest';
import { planQuestion, zeroShotWanted } from '../../../src/domain/decision/plan.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';
import { labelSet } from '../../../src/inference/classifier/label-set-loader.js';
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
    expect(planQuestion(choice('Automotive', 'Something else'), iab, true)).toEqual({
      kind: 'zero_shot_options',
      texts: ['Automotive', 'Something else'],
      question: { type: 'choice', instructions: null, options: ['Automotive', 'Something else'] },
    });
    expect(planQuestion(choice('1', '2'), iab, true)).toMatchObject({ kind: 'zero_shot_options', texts: ['1', '2'] });
  });

  it('a noul naming a label, directly or as "Is this about X?" / "Does it mention X?"', () => {
    for (const q of ['Is this about Automotive?', 'automotive', 'Does it mention the Automotive.', 'Is the article related to automotive?']) {
      expect(planQuestion(noul(q), iab, true)).toEqual({ kind: 'labels', refs: [content('Automotive')] });
    }
    expect(planQuestion(noul('Is this hate?'), moderation, false)).toEqual({ kind: 'labels', refs: [{ set: 'moderation', index: 2 }] });
    expect(planQuestion(noul('Is this positive?'), moderation, false)).toEqual({
      kind: 'zero_shot_yes',
      text: 'Is this positive?',
      question: { type: 'noul', instructions: 'Is this positive?', options: ['Yes', 'No'] },
    });
    expect(planQuestion(noul('hate/threatening'), moderation, false)).toEqual({ kind: 'labels', refs: [{ set: 'moderation', index: 3 }] });
  });

  it('brand safety and purchase intent wordings on IAB models only', () => {
    expect(planQuestion(noul('Is this page brand safe?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: false });
    expect(planQuestion(noul('Is it safe for advertisers?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: false });
    expect(planQuestion(noul('Is this a brand-safety risk?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: true });
    expect(planQuestion(noul('Is this NOT brand safe?'), iab, true)).toEqual({ kind: 'brand_safety', yesMeansUnsafe: true });
    expect(planQuestion(noul('Does the reader show purchase intent?'), iab, true)).toEqual({ kind: 'purchase_intent' });
    expect(planQuestion(noul('Is the visitor ready to buy?'), iab, true)).toEqual({ kind: 'purchase_intent' });
    expect(planQuestion(noul('Is this page brand safe?'), moderation, false)).toMatchObject({ kind: 'zero_shot_yes', text: 'Is this page brand safe?' });
  });

  it('zero-shot nouls: both criteria texts as options, else the yes text or the instructions, else nothing', () => {
    expect(planQuestion(noul('Happy?', { true: 'joyful', false: 'sad' }), iab, true)).toEqual({
      kind: 'zero_shot_options',
      texts: ['joyful', 'sad'],
      question: { type: 'noul', instructions: 'Happy?', options: ['joyful', 'sad'] },
    });
    // The chat model is asked with the texts given and Yes/No for the others.
    expect(planQuestion(noul('Happy?', { true: 'joyful', false: null }), iab, true)).toEqual({
      kind: 'zero_shot_yes',
      text: 'joyful',
      question: { type: 'noul', instructions: 'Happy?', options: ['joyful', 'No'] },
    });
    expect(planQuestion(noul('Happy?', { true: null, false: 'sad' }), iab, true)).toEqual({
      kind: 'zero_shot_yes',
      text: 'Happy?',
      question: { type: 'noul', instructions: 'Happy?', options: ['Yes', 'sad'] },
    });
    expect(planQuestion(noul(null), iab, true)).toMatchObject({ kind: 'zero_shot_yes', text: null });
  });

  it('scores are zero-shot over their levels (objects as JSON); texts to embed are listed once', () => {
    const score: DecisionQuestion = { type: 'score', instructions: null, criteria: ['low', { v: 'high' }] };
    const plan = planQuestion(score, iab, true);
    const question = { type: 'score', instructions: null, options: ['low', '{"v":"high"}'] } as const;
    expect(plan).toEqual({ kind: 'zero_shot_options', texts: ['low', '{"v":"high"}'], question });
    const yes = { type: 'noul', instructions: 'low', options: ['Yes', 'No'] } as const;
    const nothing = { type: 'noul', instructions: null, options: ['Yes', 'No'] } as const;
    const wanted = zeroShotWanted([plan, plan, { kind: 'zero_shot_yes', text: 'low', question: yes }, { kind: 'zero_shot_yes', text: null, question: nothing }]);
    // Each question once; a noul that asks nothing is not asked.
    expect(wanted).toEqual({ texts: ['low', '{"v":"high"}'], questions: [question, yes] });
  });
});

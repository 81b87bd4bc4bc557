/**
 * How each decision question is answered (spec rules 3–5), decided from the question
 * alone before any model runs:
 *
 * - label-mapped (rule 3): a `choice` whose every criterion names a label of the model (by
 *   name or tier path, case-insensitively; taxonomy ids are not names) reads those labels'
 *   scores; a `noul` whose instructions name a label ("Is this about Automotive?") reads
 *   that label's score. Scores are rolled up, so a parent covers its branch.
 * - brand safety and commercial intent (rule 4, IAB models): a `noul` whose instructions
 *   say "brand safe", "brand safety", "safe for advertisers/brands/ads" or "advertiser
 *   friendly" reads the Sensitive Topics branch of Content 2.2 (yes = safe, unless the
 *   question asks whether it is unsafe/risky; a model without the branch answers it
 *   zero-shot like any other question); one that says "purchase intent", "commercial intent",
 *   "buying intent", "intent to buy/purchase" or "(likely|looking|ready|planning|wants)
 *   to buy/purchase" reads the Purchase Intent audiences.
 * - everything else is zero-shot (rule 5) over the texts listed here.
 */
import type { LabelSet, LabelSetName } from '../shared/classification/label-sets.js';
import { zeroShotQuestionKey, type ZeroShotQuestion } from './scorer.port.js';
import { freeTextString, type DecisionQuestion } from './validation.js';

export interface LabelRef {
  set: LabelSetName;
  index: number;
}

export type QuestionPlan =
  | { kind: 'labels'; refs: LabelRef[] }
  | { kind: 'brand_safety'; yesMeansUnsafe: boolean }
  | { kind: 'purchase_intent' }
  /** noul without both criteria: P(yes) from the similarity of the state to one text (null: nothing asked, 0.5). */
  | { kind: 'zero_shot_yes'; text: string | null; question: ZeroShotQuestion }
  /** Options (choice criteria, score levels, or a noul's [true, false] texts): a softmax over similarities. */
  | { kind: 'zero_shot_options'; texts: string[]; question: ZeroShotQuestion };

const BRAND_SAFETY = /\bbrand[- ]?safe(ty)?\b|\bsafe for (advertis\w*|brands?|ads)\b|\badvertiser[- ]friendly\b/i;
const UNSAFE_WORDING = /\bunsafe\b|\bnot (brand[- ])?safe\b|\brisk(y)?\b/i;
const PURCHASE_INTENT =
  /\b(purchase|commercial|buying) intent\b|\bintent to (buy|purchase)\b|\b(likely|looking|ready|planning|plans?|wants?|intends?) to (buy|purchase)\b/i;
/** "Is this about X?", "Does it mention X?", "Is the text related to X?", "Is this X?" → X. */
const ABOUT =
  /^(?:is|does|do|are)\s+(?:this|it|the\s+(?:content|text|page|article|post|state))\s+(?:(?:about|related\s+to|(?:contain|mention|discuss|cover|concern)s?)\s+)?(.+)$/i;

/** The label sets a model's questions may name, in the order they are searched. */
export function namedSets(sets: readonly LabelSet[]): LabelSet[] {
  const order: LabelSetName[] = ['iab_content_2_2', 'iab_audience_1_1', 'moderation', 'unsafe'];
  return order.map((name) => sets.find((s) => s.name === name)).filter((s): s is LabelSet => s !== undefined);
}

interface NameIndex {
  byPath: Map<string, number>;
  byName: Map<string, number>;
}
const indices = new WeakMap<LabelSet, NameIndex>();

/**
 * findLabel's matching (tier path, else name; the shallowest label on a shared name) as
 * two Maps built once per set: a request may name 16 × 32 criteria, and a scan of the
 * 2,700 IAB labels per name costs milliseconds each.
 */
function nameIndex(set: LabelSet): NameIndex {
  let index = indices.get(set);
  if (index) return index;
  index = { byPath: new Map(), byName: new Map() };
  const depth = (i: number) => set.labels[i]!.path.length;
  for (const [i, label] of set.labels.entries()) {
    const path = label.path.join(' > ').toLowerCase();
    const name = label.name.toLowerCase();
    const atPath = index.byPath.get(path);
    if (atPath === undefined || depth(i) < depth(atPath)) index.byPath.set(path, i);
    const atName = index.byName.get(name);
    if (atName === undefined || depth(i) < depth(atName)) index.byName.set(name, i);
  }
  indices.set(set, index);
  return index;
}

function lookUp(set: LabelSet, query: string): number {
  const q = query.trim().toLowerCase();
  const { byPath, byName } = nameIndex(set);
  return byPath.get(q.split(/\s*[>/|]\s*/).join(' > ')) ?? byName.get(q) ?? -1;
}

/** The label `text` names in any of `sets`, or null. Bare numbers are not names (they would hit taxonomy ids). */
export function labelNamed(sets: readonly LabelSet[], text: string): LabelRef | null {
  const name = text.trim();
  if (name === '' || /^\d+$/.test(name)) return null;
  for (const set of sets) {
    let index = lookUp(set, name);
    // Audience 1.1 marks extension branches with a star ("Purchase Intent*").
    if (index === -1 && set.name === 'iab_audience_1_1') index = lookUp(set, `${name}*`);
    if (index !== -1) return { set: set.name, index };
  }
  return null;
}

/** The root of Content 2.2's Sensitive Topics branch (its score covers the branch), or null. */
export function sensitiveTopicsRoot(sets: readonly LabelSet[]): LabelRef | null {
  const content = sets.find((s) => s.name === 'iab_content_2_2');
  const index = content ? content.labels.findIndex((l) => l.parent === -1 && l.name === 'Sensitive Topics') : -1;
  return index === -1 ? null : { set: 'iab_content_2_2', index };
}

/** The label a noul's instructions ask about: the whole text, or X of "Is this about X?". */
function labelAskedAbout(sets: readonly LabelSet[], instructions: string): LabelRef | null {
  const text = instructions.trim().replace(/[?.!]+$/, '').trim();
  const whole = labelNamed(sets, text);
  if (whole) return whole;
  const about = ABOUT.exec(text);
  if (!about) return null;
  return labelNamed(sets, about[1]!.replace(/^(?:an?|the)\s+/i, ''));
}

/** A choice option's text for zero-shot scoring: "name: description", or the name alone. */
export const optionText = (name: string, description: string | null): string => (description === null ? name : `${name}: ${description}`);

export function planQuestion(question: DecisionQuestion, sets: readonly LabelSet[], iab: boolean): QuestionPlan {
  const named = namedSets(sets);
  const instructions = question.instructions === null ? null : freeTextString(question.instructions);
  const options = (type: DecisionQuestion['type'], texts: string[]): QuestionPlan => ({
    kind: 'zero_shot_options',
    texts,
    question: { type, instructions, options: texts },
  });
  if (question.type === 'choice') {
    const refs = question.criteria.map((c) => labelNamed(named, c.name));
    if (refs.every((r): r is LabelRef => r !== null)) return { kind: 'labels', refs };
    return options('choice', question.criteria.map((c) => optionText(c.name, c.description === null ? null : freeTextString(c.description))));
  }
  if (question.type === 'score') return options('score', question.criteria.map(freeTextString));
  if (instructions !== null) {
    if (iab && BRAND_SAFETY.test(instructions) && sensitiveTopicsRoot(sets)) return { kind: 'brand_safety', yesMeansUnsafe: UNSAFE_WORDING.test(instructions) };
    if (iab && PURCHASE_INTENT.test(instructions)) return { kind: 'purchase_intent' };
    const ref = labelAskedAbout(named, instructions);
    if (ref) return { kind: 'labels', refs: [ref] };
  }
  const { criteria } = question;
  const yes = criteria?.true ?? null;
  const no = criteria?.false ?? null;
  if (yes !== null && no !== null) return options('noul', [freeTextString(yes), freeTextString(no)]);
  const noulOptions = [yes !== null ? freeTextString(yes) : 'Yes', no !== null ? freeTextString(no) : 'No'];
  return { kind: 'zero_shot_yes', text: yes !== null ? freeTextString(yes) : instructions, question: { type: 'noul', instructions, options: noulOptions } };
}

/** The texts zero-shot plans need embedded, and the questions a chat model is asked (each once). */
export function zeroShotWanted(plans: readonly QuestionPlan[]): { texts: string[]; questions: ZeroShotQuestion[] } {
  const texts = new Set<string>();
  const questions = new Map<string, ZeroShotQuestion>();
  for (const plan of plans) {
    if (plan.kind === 'zero_shot_options') plan.texts.forEach((t) => texts.add(t));
    if (plan.kind === 'zero_shot_yes' && plan.text !== null) texts.add(plan.text);
    if (plan.kind === 'zero_shot_options' || (plan.kind === 'zero_shot_yes' && plan.text !== null)) {
      questions.set(zeroShotQuestionKey(plan.question), plan.question);
    }
  }
  return { texts: [...texts], questions: [...questions.values()] };
}

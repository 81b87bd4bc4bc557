/**
 * The decision playground's logic: the question builder's drafts made into the exact
 * `POST /v1/systemone` body (or the reason they cannot be), and the answers read back in
 * the request's order. Answers are looked up by name, never by the parsed object's key
 * order: JSON.parse lists integer-like names ("10", "2") first, whatever the server wrote.
 */
export type QuestionKind = 'noul' | 'choice' | 'score';

export interface DraftOption {
  name: string;
  description: string;
}

export interface DraftQuestion {
  name: string;
  type: QuestionKind;
  instructions: string;
  /** choice: name → description (blank: the name alone). */
  options: DraftOption[];
  /** score: levels, low end first. */
  levels: string[];
  /** noul: what a yes and a no mean (both optional). */
  yes: string;
  no: string;
}

export const MAX_QUESTIONS = 16;
export const MAX_CRITERIA = 32;

export function draftQuestion(type: QuestionKind, name: string): DraftQuestion {
  const options = type === 'choice' ? [{ name: '', description: '' }, { name: '', description: '' }] : [];
  const levels = type === 'score' ? ['', '', ''] : [];
  return { name, type, instructions: '', options, levels, yes: '', no: '' };
}

/** A name for a new question that no other question has: `q1`, `q2`, … */
export function nextQuestionName(questions: readonly DraftQuestion[]): string {
  const taken = new Set(questions.map((q) => q.name));
  let n = questions.length + 1;
  while (taken.has(`q${n}`)) n++;
  return `q${n}`;
}

export type DecisionBody = { model: string; state: unknown; questions: Record<string, Record<string, unknown>> };
export type Built = { body: DecisionBody; problem: null } | { body: null; problem: string };

/** The state as sent: the text itself, or (JSON mode) the object or array it parses to. */
function readState(text: string, json: boolean): { state: unknown } | { problem: string } {
  if (text.trim() === '') return { problem: 'Write the state: the content every question is about' };
  if (!json) return { state: text };
  try {
    const state: unknown = JSON.parse(text);
    if (typeof state !== 'object' || state === null) return { problem: 'A JSON state must be an object or an array' };
    return { state };
  } catch (err) {
    return { problem: `The state is not valid JSON: ${(err as Error).message}` };
  }
}

function questionBody(q: DraftQuestion): Record<string, unknown> | string {
  const out: Record<string, unknown> = { type: q.type };
  if (q.instructions.trim()) out.instructions = q.instructions;
  if (q.type === 'noul') {
    const criteria: Record<string, string> = {};
    if (q.yes.trim()) criteria.true = q.yes;
    if (q.no.trim()) criteria.false = q.no;
    if (Object.keys(criteria).length > 0) out.criteria = criteria;
  } else if (q.type === 'choice') {
    const names = q.options.map((o) => o.name.trim());
    if (names.length === 0 || names.some((n) => n === '')) return `every option of ${q.name} needs a name`;
    if (new Set(names).size !== names.length) return `the options of ${q.name} must have different names`;
    if (names.length > MAX_CRITERIA) return `${q.name} has more than ${MAX_CRITERIA} options`;
    out.criteria = Object.fromEntries(q.options.map((o) => [o.name.trim(), o.description.trim() || null]));
  } else {
    const levels = q.levels.map((l) => l.trim());
    if (levels.length === 0 || levels.some((l) => l === '')) return `every level of ${q.name} needs a text`;
    if (levels.length > MAX_CRITERIA) return `${q.name} has more than ${MAX_CRITERIA} levels`;
    out.criteria = levels;
  }
  return out;
}

/** The request body for the drafts, or the first thing that keeps it from being sent. */
export function buildDecisionRequest(model: string, stateText: string, stateIsJson: boolean, drafts: readonly DraftQuestion[]): Built {
  const read = readState(stateText, stateIsJson);
  if ('problem' in read) return { body: null, problem: read.problem };
  if (drafts.length === 0) return { body: null, problem: 'Add a question' };
  if (drafts.length > MAX_QUESTIONS) return { body: null, problem: `At most ${MAX_QUESTIONS} questions` };
  const questions: Record<string, Record<string, unknown>> = {};
  for (const q of drafts) {
    const name = q.name.trim();
    if (!name) return { body: null, problem: 'Every question needs a name' };
    if (Object.hasOwn(questions, name)) return { body: null, problem: `Two questions are named ${name}` };
    const built = questionBody({ ...q, name });
    if (typeof built === 'string') return { body: null, problem: built[0]!.toUpperCase() + built.slice(1) };
    questions[name] = built;
  }
  return { body: { model, state: read.state, questions }, problem: null };
}

export interface AnswerBar {
  label: string;
  probability: number;
}

export interface AnswerView {
  name: string;
  type: QuestionKind;
  /** The answer in a few words: P(yes), the choice, or the expected level. */
  headline: string;
  /** null for a noul (System One returns none). */
  confidence: number | null;
  bars: AnswerBar[];
}

type Answer = Record<string, unknown>;
const num = (x: unknown): number => (typeof x === 'number' ? x : 0);
const record = (x: unknown): Record<string, unknown> => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {});

function viewOf(name: string, question: Record<string, unknown>, answer: Answer): AnswerView {
  const type = question.type as QuestionKind;
  const probabilities = record(answer.probabilities);
  if (type === 'noul') {
    const p = num(answer.noul);
    const criteria = record(question.criteria);
    const yes = typeof criteria.true === 'string' ? `Yes: ${criteria.true}` : 'Yes';
    const no = typeof criteria.false === 'string' ? `No: ${criteria.false}` : 'No';
    return { name, type, headline: `P(yes) = ${p.toFixed(3)}`, confidence: null, bars: [{ label: yes, probability: p }, { label: no, probability: 1 - p }] };
  }
  if (type === 'choice') {
    const bars = Object.keys(record(question.criteria)).map((option) => ({ label: option, probability: num(probabilities[option]) }));
    return { name, type, headline: `Choice: ${String(answer.choice)}`, confidence: num(answer.confidence), bars };
  }
  const legend = record(answer.legend);
  const levels = Array.isArray(question.criteria) ? question.criteria : [];
  const bars = levels.map((_, i) => ({ label: `${i}: ${String(legend[String(i)] ?? levels[i])}`, probability: num(probabilities[String(i)]) }));
  return { name, type, headline: `Score ${num(answer.score).toFixed(2)} of ${levels.length - 1}`, confidence: num(answer.confidence), bars };
}

/** The answers of `response` in the order of the request's questions (a missing one is left out). */
export function answerViews(body: DecisionBody, response: unknown): AnswerView[] {
  const answers = record(record(response).answers);
  return Object.entries(body.questions).flatMap(([name, question]) => {
    const answer = answers[name];
    return typeof answer === 'object' && answer !== null ? [viewOf(name, question, answer as Answer)] : [];
  });
}

/** The models a decision playground offers: ready and served on /v1/systemone. */
export const isDecisionModel = (model: { routes: string[]; ready: boolean }): boolean => model.ready && model.routes.includes('/v1/systemone');

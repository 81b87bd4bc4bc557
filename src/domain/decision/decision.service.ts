/**
 * POST /v1/systemone: up to 16 named questions about one state, answered by a decision
 * model in one call. The body is read with FastAPI-style 422s (validation.ts), the model
 * resolved (aliases such as `jev-latest` → the configured default, or the one decision
 * model ready when none is configured), every question
 * planned (plan.ts: label-mapped, brand safety / purchase intent, or zero-shot), and the
 * state scored once by the model; the call is billed on input tokens only.
 */
import type { ModelSpec } from '../models/model-spec.types.js';
import type { Caller } from '../identity/caller.js';
import { meteredCall } from '../billing/meter.js';
import { AppError, invalidRequest, notFound } from '../shared/errors.js';
import { meteredCallOf } from '../completions/metered-call.js';
import {
  calibrateOptions,
  calibrateYes,
  calibratorFor,
  choiceAnswer,
  normalise,
  noulAnswer,
  scoreAnswer,
  type DecisionAnswer,
} from './answers.js';
import { planQuestion, sensitiveTopicsRoot, zeroShotWanted, type LabelRef, type QuestionPlan } from './plan.js';
import type { DecisionModel, DecisionScorer, StateScores, ZeroShotScores } from './scorer.port.js';
import type { LabelSetName } from '../shared/classification/label-sets.js';
import { freeTextString, readDecisionRequest, unprocessable, type DecisionQuestion, type FreeText, type KeyOrders } from './validation.js';

export const DECISION_ROUTE = '/v1/systemone';
export const DECISION_MODELS: readonly string[] = [
  'zlm-v1-moderation-edge',
  'zlm-v1-iab-classify-edge',
  'zlm-v1-iab-domain-classifier',
  'zlm-v2-iab-classify-edge-enriched',
];
const DOMAIN_MODEL = 'zlm-v1-iab-domain-classifier';
const DOMAIN_OR_URL = /^(?:https?:\/\/)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}(?::\d{1,5})?(?:[/?#]\S*)?$/i;

export interface DecisionSettings {
  /** The model `jev-latest` and the other aliases answer with; null: the one decision model ready, if exactly one is. */
  defaultModel: string | null;
  aliases: readonly string[];
}

export interface ModelLookup {
  find(name: string): ModelSpec | undefined;
}

export interface DecisionResponse {
  model: string;
  answers: Record<string, DecisionAnswer>;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

/** System One's versioned ids (`jev-1.13.0`) are aliases too. */
const VERSIONED_ALIAS = /^jev-\d+(\.\d+)*$/i;

export class DecisionService {
  constructor(
    private readonly models: ModelLookup,
    private readonly scorer: DecisionScorer,
    private readonly settings: DecisionSettings,
  ) {}

  async resolveModel(name: string): Promise<ModelSpec> {
    const lower = name.toLowerCase();
    const alias = this.settings.aliases.some((a) => a.toLowerCase() === lower) || VERSIONED_ALIAS.test(name);
    const model = alias ? await this.#aliasTarget(name) : this.models.find(name);
    if (!model) throw notFound(`The model \`${name}\` does not exist`, 'model_not_found', 'model');
    if (!DECISION_MODELS.includes(model.id)) {
      throw invalidRequest(
        `Model ${model.id} does not answer decisions; use one of ${DECISION_MODELS.join(', ')}`,
        'model',
        'model_not_supported',
      );
    }
    return model;
  }

  /**
   * What an alias answers with: the configured default, else the one decision model that
   * is ready, so a System One client works with no configuration. With several ready (or
   * none) the 404 names the setting that chooses.
   */
  async #aliasTarget(name: string): Promise<ModelSpec | undefined> {
    if (this.settings.defaultModel !== null) return this.models.find(this.settings.defaultModel);
    const configured = DECISION_MODELS.map((id) => this.models.find(id)).filter((m): m is ModelSpec => m !== undefined);
    const readiness = await Promise.all(configured.map((model) => this.scorer.ready(model)));
    const ready = configured.filter((_, i) => readiness[i]);
    if (ready.length === 1) return ready[0];
    const why = ready.length === 0 ? 'no decision model is ready' : `${ready.length} decision models are ready (${ready.map((m) => m.id).join(', ')})`;
    throw notFound(
      `The model \`${name}\` is an alias and ${why}: set DECISION_DEFAULT_MODEL (decision.default_model) to the model it answers with`,
      'model_not_found',
      'model',
    );
  }

  async decide(
    caller: Caller,
    body: unknown,
    /** `route`: the usage record's route (default /v1/systemone). */
    context: { requestId: string; signal?: AbortSignal; keyOrders?: KeyOrders; route?: string },
  ): Promise<DecisionResponse> {
    const request = readDecisionRequest(body, context.keyOrders);
    const model = await this.resolveModel(request.model);
    if (model.id === DOMAIN_MODEL) assertDomainState(request.state);
    const state = freeTextString(request.state);
    const questionTexts = [...request.questions.values()].map(questionText);
    const decisionModel = await this.scorer.open(model, context.signal, context.requestId);
    const iab = model.entry.task !== 'moderation';
    const plans = new Map([...request.questions].map(([name, q]) => [name, planQuestion(q, decisionModel.labelSets, iab)]));
    const call = meteredCallOf(model, context.route ?? DECISION_ROUTE, context.requestId, [state, ...questionTexts], 0);
    return meteredCall(caller, call, async () => {
      const evidence = await gather(decisionModel, state, [...plans.values()], context.signal);
      const answers = Object.create(null) as Record<string, DecisionAnswer>;
      for (const [name, question] of request.questions) answers[name] = answer(question, plans.get(name)!, evidence);
      let inputTokens = evidence.scores.tokens;
      for (const text of questionTexts) inputTokens += decisionModel.countTokens(text);
      const value: DecisionResponse = {
        model: model.id,
        answers,
        usage: { input_tokens: inputTokens, output_tokens: 0, total_tokens: inputTokens },
      };
      return { value, usage: { inputTokens, outputTokens: 0, status: 200 } };
    });
  }

  /**
   * The uncalibrated probabilities of one question about `state` (noul: [P(yes)]; choice
   * and score: one per option, summing to 1): what `sluice calibrate` fits on. Not billed.
   */
  async uncalibrated(model: ModelSpec, state: FreeText, question: DecisionQuestion): Promise<number[]> {
    if (model.id === DOMAIN_MODEL) assertDomainState(state);
    const decisionModel = await this.scorer.open(model);
    const plan = planQuestion(question, decisionModel.labelSets, model.entry.task !== 'moderation');
    const evidence = await gather(decisionModel, freeTextString(state), [plan]);
    return rawProbabilities(question, plan, evidence);
  }
}

/** The label sets the plans read: only those are scored (a label-matrix product each). */
function labelSetsRead(plans: readonly QuestionPlan[]): Set<LabelSetName> {
  const sets = new Set<LabelSetName>();
  for (const plan of plans) {
    if (plan.kind === 'labels') plan.refs.forEach((ref) => sets.add(ref.set));
    if (plan.kind === 'purchase_intent') sets.add('iab_audience_1_1');
    if (plan.kind === 'brand_safety') sets.add('iab_content_2_2');
  }
  return sets;
}

/** The state scored once (the label sets the plans read) and the zero-shot texts and questions scored. */
async function gather(model: DecisionModel, state: string, plans: readonly QuestionPlan[], signal?: AbortSignal): Promise<Evidence> {
  const scores = await model.scoreState(state, labelSetsRead(plans), signal);
  const wanted = zeroShotWanted(plans);
  const zeroShot = await model.zeroShot(scores, state, wanted, signal);
  return { model, scores, zeroShot };
}

function assertDomainState(state: FreeText): void {
  if (typeof state === 'string' && DOMAIN_OR_URL.test(state.trim())) return;
  throw unprocessable([
    {
      type: 'value_error',
      loc: ['body', 'state'],
      msg: `Value error, state must be a URL or a domain for ${DOMAIN_MODEL}`,
      input: state,
      ctx: { error: `state must be a URL or a domain for ${DOMAIN_MODEL}` },
    },
  ]);
}

/** The question as the model reads it (instructions, then criteria): what `usage` counts. */
function questionText(question: DecisionQuestion): string {
  const parts: string[] = [];
  if (question.instructions !== null) parts.push(freeTextString(question.instructions));
  if (question.type === 'choice') for (const c of question.criteria) parts.push(c.description === null ? c.name : `${c.name}: ${freeTextString(c.description)}`);
  if (question.type === 'score') for (const level of question.criteria) parts.push(freeTextString(level));
  if (question.type === 'noul' && question.criteria) {
    for (const text of [question.criteria.true, question.criteria.false]) if (text !== null) parts.push(freeTextString(text));
  }
  return parts.join('\n');
}

interface Evidence {
  model: DecisionModel;
  scores: StateScores;
  zeroShot: ZeroShotScores;
}

function labelProbability(e: Evidence, ref: LabelRef): number {
  return e.scores.probs.get(ref.set)?.[ref.index] ?? 0;
}

/** The Sensitive Topics label's rolled-up score: the branch's best (planned only where the model has it). */
function sensitiveScore(e: Evidence): number {
  const root = sensitiveTopicsRoot(e.model.labelSets);
  if (!root) throw new AppError('internal', 'a brand-safety plan on a model without the Sensitive Topics branch');
  return labelProbability(e, root);
}

function purchaseIntentScore(e: Evidence): number {
  const audience = e.model.labelSets.find((s) => s.name === 'iab_audience_1_1');
  if (!audience) return 0;
  const root = audience.labels.findIndex((l) => l.parent === -1 && l.name.startsWith('Purchase Intent'));
  return root === -1 ? 0 : labelProbability(e, { set: audience.name, index: root });
}

function yesOf(plan: QuestionPlan, e: Evidence): number {
  switch (plan.kind) {
    case 'labels':
      return labelProbability(e, plan.refs[0]!);
    case 'brand_safety': {
      const unsafe = sensitiveScore(e);
      return plan.yesMeansUnsafe ? unsafe : 1 - unsafe;
    }
    case 'purchase_intent':
      return purchaseIntentScore(e);
    case 'zero_shot_yes':
      return plan.text === null ? 0.5 : e.zeroShot.yes(plan.text, plan.question);
    case 'zero_shot_options':
      return e.zeroShot.options(plan.texts, plan.question)[0]!;
  }
}

function optionsOf(plan: QuestionPlan, e: Evidence): number[] {
  if (plan.kind === 'labels') return plan.refs.map((ref) => labelProbability(e, ref));
  if (plan.kind === 'zero_shot_options') return e.zeroShot.options(plan.texts, plan.question);
  throw new AppError('internal', `a ${plan.kind} plan has no options`);
}

function rawProbabilities(question: DecisionQuestion, plan: QuestionPlan, e: Evidence): number[] {
  return question.type === 'noul' ? [yesOf(plan, e)] : normalise(optionsOf(plan, e));
}

function answer(question: DecisionQuestion, plan: QuestionPlan, e: Evidence): DecisionAnswer {
  const cal = calibratorFor(e.model.calibration, question.type);
  const raw = rawProbabilities(question, plan, e);
  if (question.type === 'noul') return noulAnswer(calibrateYes(raw[0]!, cal));
  const probs = calibrateOptions(raw, cal);
  if (question.type === 'choice') return choiceAnswer(question.criteria.map((c) => c.name), probs);
  return scoreAnswer(question.criteria.map(freeTextString), probs);
}

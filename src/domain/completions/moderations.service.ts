/**
 * POST /v1/moderations (digest §3.1): `model` optional (OpenAI's moderation ids map to
 * zlm-v1-moderation-edge); `input` a string, an array of strings (one result each) or
 * an array of text parts (together one input). Results always carry the 13 categories
 * in OpenAI's order.
 */
import type { Caller } from '../identity/caller.js';
import { runAdmitted } from '../billing/meter.js';
import { randomString } from '../shared/ids.js';
import { MODERATION_CATEGORIES } from '../shared/classification/moderation-categories.js';
import type { CallContext, ModerationResult } from '../models/inference-backend.port.js';
import type { InferenceServiceDeps } from './chat-call.js';
import { assertWithinContext } from './chat-runner.js';
import { admitOnCountedInput, askedBy, labelled, meteredCallOf } from './metered-call.js';
import { ServedListener } from './served-call.js';

export const MODERATIONS_ROUTE = '/v1/moderations';
export const DEFAULT_MODERATION_MODEL = 'zlm-v1-moderation-edge';
const OPENAI_ALIASES = new Set(['omni-moderation-latest', 'text-moderation-stable', 'text-moderation-latest']);


/** Inputs and, for each, the param that names it in errors. */
/** A moderations request as the domain takes it: the fields of a validated body it reads (src/wire/moderations/body.ts). */
export interface ModerationsRequestIn {
  model?: string | null;
  /** A string, strings (one result each) or text parts (one input together). */
  input: string | string[] | Array<{ type: 'text'; text: string }>;
  metadata?: Record<string, unknown> | null;
}

function inputsOf(input: ModerationsRequestIn['input']): { texts: string[]; params: string[] } {
  if (typeof input === 'string') return { texts: [input], params: ['input'] };
  // Validated: all strings (one result each) or all text parts (one input together).
  if (input.every((item) => typeof item === 'string')) return { texts: input, params: input.map((_, i) => `input[${i}]`) };
  return { texts: [input.map((part) => (typeof part === 'string' ? part : part.text)).join('\n')], params: ['input'] };
}

function resultWire(result: ModerationResult) {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const name of MODERATION_CATEGORIES) {
    scores[name] = result.categoryScores[name] ?? 0;
    categories[name] = result.categories[name] ?? false;
    applied[name] = ['text'];
  }
  // The overall unsafe score (the binary head) sits beside `flagged`, where the service's
  // earlier answers carried it, when the model has one; OpenAI's SDKs ignore it.
  if (result.unsafeScore === undefined) {
    return { flagged: result.flagged, categories, category_scores: scores, category_applied_input_types: applied };
  }
  return { flagged: result.flagged, unsafe_score: result.unsafeScore, categories, category_scores: scores, category_applied_input_types: applied };
}

export class ModerationsService {
  constructor(private readonly deps: InferenceServiceDeps) {}

  async create(caller: Caller, body: ModerationsRequestIn, context: CallContext & { route?: string }): Promise<Record<string, unknown>> {
    const requested = body.model ?? undefined;
    const { texts, params } = inputsOf(body.input);
    const options = body.metadata ?? {};
    const { registry } = this.deps;
    const name = requested === undefined || OPENAI_ALIASES.has(requested) ? DEFAULT_MODERATION_MODEL : requested;
    const model = registry.require(name, 'moderations');
    if (!model.entry.truncatesInput) {
      for (const [i, text] of texts.entries()) await assertWithinContext(registry, model, text, params[i]!);
    }
    const backend = await registry.backendFor(model, 'moderate');
    const metered = labelled(askedBy(meteredCallOf(model, context.route ?? MODERATIONS_ROUTE, context.requestId, texts, 0), name), context);
    const admission = await admitOnCountedInput(caller, registry, model, metered, texts);
    const served = new ServedListener();
    const output = await runAdmitted(caller, admission, async () => {
      const value = await backend.moderate!({ requestId: context.requestId, signal: context.signal, model, inputs: texts, options, onServed: served.listen, story: context.story });
      served.announce(caller, model.id);
      return { value, usage: served.usage({ inputTokens: value.usage.inputTokens, outputTokens: value.usage.outputTokens, status: 200 }) };
    });
    return {
      id: `modr-${randomString(17, 'hex').slice(0, 33)}`,
      model: registry.isAlias(name) ? name : model.id,
      results: output.results.map(resultWire),
    };
  }
}

/**
 * POST /v1/completions: the legacy text route, for chat models served by an upstream
 * engine. Sluice reads the model, the prompt (for the hold), the caps and `n`; every other
 * field goes to the engine unchanged, and its choices and fields come back as sent, with
 * Sluice's id, model and usage. Metered like chat: held on the prompt and the output cap
 * (times `n`), settled on the engine's usage (counted when it reports none); a stream that
 * ends early is billed for what it delivered, as chat's is (stream-settlement.ts).
 */
import type { Caller } from '../identity/caller.js';
import { admitCall, meteredCall, type Admission } from '../billing/meter.js';
import { toUnixSeconds } from '../shared/clock.js';
import { invalidRequest } from '../shared/errors.js';
import { randomString } from '../shared/ids.js';
import type { CarriedAnswer, ChatStreamEvent, CompletionParams, InferenceBackend, TokenUsage } from '../models/inference-backend.port.js';
import type { CompletionRequestBody } from '../../wire/completions.js';
import type { ChatCompletionsContext } from './chat-completions.port.js';
import type { InferenceServiceDeps } from './chat-completions.service.js';
import { chatUsageWire } from './chat-wire.js';
import { choicesOf, meteredCallOf, outputCapOf } from './metered-call.js';
import { samplingOf } from './chat-request.js';
import { ServedListener } from './served-call.js';
import { StreamSettlement, releasedIfNeverRead } from './stream-settlement.js';

export const COMPLETIONS_ROUTE = '/v1/completions';

type Json = Record<string, unknown>;

const newCompletionId = (): string => `cmpl-${randomString(24, 'base64url')}`;

/** The prompt's texts (token ids count as one byte each: every id is at most one token). */
function promptTexts(prompt: CompletionRequestBody['prompt']): string[] {
  if (typeof prompt === 'string') return [prompt];
  return prompt.map((p) => (typeof p === 'string' ? p : 'x'.repeat(Array.isArray(p) ? p.length : 1)));
}

function wire(object: string, id: string, created: number, model: string, carried: CarriedAnswer, usage: TokenUsage | null): Json {
  const answer: Json = { id, object, created, model, choices: carried.choices, system_fingerprint: null };
  Object.assign(answer, carried.fields);
  if (usage) answer.usage = completionUsage(usage);
  return answer;
}

const completionUsage = (usage: TokenUsage) => {
  const { prompt_tokens, completion_tokens, total_tokens } = chatUsageWire(usage);
  return { prompt_tokens, completion_tokens, total_tokens };
};

export class CompletionsService {
  constructor(private readonly deps: InferenceServiceDeps) {}

  async create(caller: Caller, body: CompletionRequestBody, context: ChatCompletionsContext): Promise<Json> {
    const { params, backend, metered } = await this.#prepare(body, context, false);
    return meteredCall(caller, metered, async (admission) => {
      const served = new ServedListener();
      const output = await backend.complete!(served.context(withCap(params, admission)));
      served.announce(caller);
      const value = wire('text_completion', newCompletionId(), this.#now(), served.modelOr(params.model.id), output.carried, output.usage);
      return { value, usage: served.usage({ inputTokens: output.usage.inputTokens, outputTokens: output.usage.outputTokens, status: 200 }) };
    });
  }

  /** Starts a streamed completion once the engine produced its first event; iterate it for `text_completion` chunks. */
  async openStream(caller: Caller, body: CompletionRequestBody, context: ChatCompletionsContext): Promise<AsyncIterable<Json>> {
    const { params, backend, metered } = await this.#prepare(body, context, true);
    const admission = await admitCall(caller, metered);
    const served = new ServedListener();
    const events = backend.completeStream!(served.context(withCap(params, admission)))[Symbol.asyncIterator]();
    let first: IteratorResult<ChatStreamEvent>;
    try {
      first = await events.next();
    } catch (err) {
      admission.release();
      throw err;
    }
    served.announce(caller);
    const relay = this.#relay(caller, admission, { params, served }, events, first, body.stream_options?.include_usage === true, context);
    return releasedIfNeverRead(relay, admission, context.signal);
  }

  async #prepare(body: CompletionRequestBody, context: ChatCompletionsContext, streaming: boolean) {
    const model = this.deps.registry.require(body.model, 'chat');
    if (model.entry.task !== 'chat' || !model.binding.upstream) {
      throw invalidRequest(`Model ${model.id} is not supported on ${COMPLETIONS_ROUTE}; it serves chat models of an upstream engine`, 'model', 'model_not_found');
    }
    const backend: InferenceBackend = await this.deps.registry.backendFor(model, streaming ? 'completeStream' : 'complete');
    const texts = promptTexts(body.prompt);
    const fields = samplingOf(body);
    delete fields.prompt;
    const params: CompletionParams = { requestId: context.requestId, signal: context.signal, model, prompt: body.prompt, fields, promptText: texts.join('\n') };
    const metered = meteredCallOf(model, context.route ?? COMPLETIONS_ROUTE, context.requestId, [...texts, body.suffix ?? ''], outputCapOf(model, fields));
    return { params, backend, metered };
  }

  async *#relay(
    caller: Caller,
    admission: Admission,
    { params, served }: { params: CompletionParams; served: ServedListener },
    events: AsyncIterator<ChatStreamEvent>,
    first: IteratorResult<ChatStreamEvent>,
    includeUsage: boolean,
    context: ChatCompletionsContext,
  ): AsyncGenerator<Json> {
    const id = newCompletionId();
    const created = this.#now();
    const model = served.modelOr(params.model.id);
    const settlement = new StreamSettlement({
      caller,
      admission,
      served,
      signal: context.signal,
      count: (produced) => this.#countedUsage(params, produced),
      logger: this.deps.logger,
      requestId: context.requestId,
    });
    try {
      for (let step = first; !step.done; step = await events.next()) {
        const event = step.value;
        if (event.type === 'usage') settlement.reported(event.usage);
        else if (event.type === 'chunk') {
          settlement.delivered(event.text);
          const chunk = wire('text_completion', id, created, model, event.carried, null);
          if (includeUsage) chunk.usage = null;
          yield chunk;
        }
      }
      const usage = await settlement.finish();
      if (includeUsage) yield { id, object: 'text_completion', created, model, choices: [], usage: completionUsage(usage) };
    } finally {
      await events.return?.(undefined)?.catch(() => {});
      await settlement.close();
    }
  }

  /** The usage counted with the model's tokenizer (or estimated): the prompt in, what was produced out. */
  async #countedUsage(params: CompletionParams, produced: string): Promise<TokenUsage> {
    return {
      inputTokens: (await this.deps.registry.countTokens(params.model, params.promptText)).tokens,
      outputTokens: (await this.deps.registry.countTokens(params.model, produced)).tokens,
    };
  }

  #now(): number {
    return toUnixSeconds(this.deps.clock.nowMs());
  }
}

/** The call run with the cap its meter granted (for every completion together), when it lowered it. */
function withCap(params: CompletionParams, admission: Admission): CompletionParams {
  if (admission.outputCap === undefined) return params;
  const perChoice = Math.max(1, Math.floor(admission.outputCap / choicesOf(params.fields)));
  return { ...params, fields: { ...params.fields, max_tokens: perChoice } };
}

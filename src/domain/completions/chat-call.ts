/**
 * The one chat call every chat-shaped wire runs through (chat completions, Responses,
 * legacy completions, and any wire added later): admission on the call's estimate, the
 * hold, running the engine with the cap the meter granted, settlement on the engine's
 * usage (counted when it reports none), the usage record naming who served, and the hold
 * released when a stream is never read. A wire maps its body to an EngineCall, calls
 * `run()` or `open()`, and writes what comes back in its own shape.
 *
 *   const answered = await chat.run(caller, call, context);   // whole: { result, model, outputCap }
 *
 * The answer names the model asked for when the request named an alias, else the one
 * that served; `x-sluice-model` and the usage record name the one that served.
 *   const opened = await chat.open(caller, call, context);    // streamed, once the engine answered
 *   for await (const event of opened) ...                     // the engine's events; the last is the usage billed
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import { admitCall, meteredCall, type Admission, type MeteredCall } from '../billing/meter.js';
import { onAbort } from '../shared/abort.js';
import type { Clock } from '../shared/clock.js';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../models/inference-backend.port.js';
import type { ModelSpec } from '../models/model-spec.types.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import { ChatRunner, withOutputCap, type ChatResult, type Conversation, type PreparedCall } from './chat-runner.js';
import { CONVERSATION_FRAMING_TOKENS, IMAGE_PART_TOKENS, askedBy, chatInputOf, labelled, meteredCallOf, outputCapOf } from './metered-call.js';
import { ServedListener } from './served-call.js';
import type { PromptHygiene } from './prompt-hygiene.js';
import { StreamSettlement } from './stream-settlement.js';

export interface InferenceServiceDeps {
  registry: ModelResolver;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** What is removed from prompts before they reach an engine (default: Claude Code's billing header). */
  hygiene?: PromptHygiene;
}

/** Where a call came from, for its usage record (`/v1/chat/completions`, `batch`), and its request id. */
export interface CallOrigin {
  route: string;
  requestId: string;
}

/** A call ready to run: refused already if it could not, not yet admitted. */
export interface EngineCall<R extends { usage: TokenUsage }> {
  /** The model asked for (the answer names the one that served, a fallback's). */
  model: ModelSpec;
  /** The alias the request named the model by (the answer names it), or null when it named the model's id. */
  askedAs: string | null;
  /** What its credit reservation is priced on. */
  metered: MeteredCall;
  /** Runs it whole, with the output cap the meter granted (undefined: its own). */
  run(outputCap: number | undefined, context: CallContext): Promise<R>;
  /** Streams it; the last event is always `usage`. */
  stream(outputCap: number | undefined, context: CallContext): AsyncIterator<ChatStreamEvent>;
  /** Its usage counted from its input and the text it produced (an engine that reported none, a cut stream). */
  count(produced: string): Promise<TokenUsage>;
}

/** A whole answer, settled: the engine's result, the model that served, the cap it ran with when the meter lowered it. */
export interface Answered<R> {
  result: R;
  model: string;
  outputCap: number | undefined;
}

/**
 * A streamed call the engine has answered. Its events are the engine's, without its
 * usage reports; after the last, one `usage` event carries the usage billed. Stopping
 * the iteration (or a failure) settles what was delivered; a client that leaves before
 * the first read releases the hold.
 */
export interface OpenedChat extends AsyncIterable<ChatStreamEvent> {
  readonly model: string;
  readonly outputCap: number | undefined;
  /**
   * The events as a wire writes them, in the same relay (no second generator per event):
   * `write` turns each into the wire's frame, or null to leave it out.
   */
  written<T>(write: (event: ChatStreamEvent) => T | null): AsyncIterable<T>;
  /**
   * Ends the call if its events were not read to the end (idempotent): what a writer that
   * stopped before reading them calls. Resolves with the usage billed for a cut stream.
   */
  close(): Promise<TokenUsage | null>;
}

/** What a stream delivered, as the settlement counts it when the engine reports no usage. */
function deliveredText(event: ChatStreamEvent): string {
  if (event.type === 'chunk') return event.text;
  if (event.type === 'delta') return (event.content ?? '') + (event.reasoning ?? '') + (event.toolCalls?.map((c) => c.name + c.arguments).join('') ?? '');
  return '';
}

type Write<T> = (event: ChatStreamEvent) => T | null;

const asSent: Write<ChatStreamEvent> = (event) => event;

/**
 * The relay of an opened stream: records what it delivered, yields it as the wire
 * writes it, and settles at its end (or when stopped or cut).
 */
async function* relay<T>(events: AsyncIterator<ChatStreamEvent>, first: IteratorResult<ChatStreamEvent>, settlement: StreamSettlement, write: Write<T>): AsyncGenerator<T> {
  try {
    for (let step = first; !step.done; step = await events.next()) {
      const event = step.value;
      if (event.type === 'usage') settlement.reported(event.usage);
      else {
        settlement.delivered(deliveredText(event));
        const frame = write(event);
        if (frame !== null) yield frame;
      }
    }
    const frame = write({ type: 'usage', usage: await settlement.finish() });
    if (frame !== null) yield frame;
  } finally {
    await events.return?.(undefined)?.catch(() => {});
    await settlement.close();
  }
}

/**
 * The relay settles its admission when it ends, but a generator that is never started
 * never runs its `finally`: a client that leaves between the first upstream event and the
 * first read of the stream would keep its hold forever. Until the stream is first read,
 * the client's disconnect releases the admission (nothing was delivered, nothing billed);
 * a writer that stops before reading it closes it.
 */
class OpenedStream implements OpenedChat {
  readonly #first: IteratorResult<ChatStreamEvent>;
  readonly #events: AsyncIterator<ChatStreamEvent>;
  readonly #settlement: StreamSettlement;
  readonly #stopRelease: () => void;
  #released = false;

  constructor(
    opened: { events: AsyncIterator<ChatStreamEvent>; first: IteratorResult<ChatStreamEvent>; settlement: StreamSettlement; admission: Admission; signal: AbortSignal },
    readonly model: string,
    readonly outputCap: number | undefined,
  ) {
    this.#first = opened.first;
    this.#events = opened.events;
    this.#settlement = opened.settlement;
    this.#stopRelease = onAbort(opened.signal, () => {
      this.#released = true;
      opened.admission.release();
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<ChatStreamEvent> {
    return this.#start(asSent);
  }

  written<T>(write: Write<T>): AsyncIterable<T> {
    return { [Symbol.asyncIterator]: () => this.#start(write) };
  }

  /** The first read: from now on the relay settles the call, whatever happens. */
  #start<T>(write: Write<T>): AsyncGenerator<T> {
    this.#stopRelease();
    return relay(this.#events, this.#first, this.#settlement, write);
  }

  async close(): Promise<TokenUsage | null> {
    this.#stopRelease();
    await this.#events.return?.(undefined)?.catch(() => {});
    return this.#released ? null : this.#settlement.close();
  }
}

/**
 * The call's credit estimate: its messages (a conversation's template included), parts
 * and tools, or its task input; and its output cap (times `n`).
 */
export function meteredOf(call: PreparedCall, route: string, requestId: string): MeteredCall {
  const { sampling } = call.conversation;
  const cap = outputCapOf(call.model, sampling);
  if (call.kind === 'task') return meteredCallOf(call.model, route, requestId, [call.input], cap);
  const { texts, images } = chatInputOf(call.messages, sampling);
  return meteredCallOf(call.model, route, requestId, texts, cap, CONVERSATION_FRAMING_TOKENS + images * IMAGE_PART_TOKENS);
}

export class ChatCall {
  readonly #runner: ChatRunner;

  constructor(private readonly deps: InferenceServiceDeps) {
    this.#runner = new ChatRunner(deps.registry, deps.hygiene);
  }

  /**
   * A conversation with a model of `modelRoute`, as an engine call: everything that can
   * refuse it without running it (the model, shape, labels, context length, backend).
   */
  async prepare(modelName: string, modelRoute: 'chat' | 'responses', conversation: Conversation, streaming: boolean, origin: CallOrigin): Promise<EngineCall<ChatResult>> {
    const model = this.deps.registry.require(modelName, modelRoute);
    const call = await this.#runner.prepare(model, conversation, streaming);
    const runner = this.#runner;
    const registry = this.deps.registry;
    return {
      model,
      askedAs: this.deps.registry.isAlias(modelName) ? modelName : null,
      metered: askedBy(meteredOf(call, origin.route, origin.requestId), modelName),
      run: (cap, ctx) => runner.run(withOutputCap(call, cap), ctx),
      stream: (cap, ctx) => runner.stream(withOutputCap(call, cap), ctx),
      async count(produced) {
        const messages = call.kind === 'chat' ? call.messages : [{ role: 'user' as const, content: call.input }];
        return { inputTokens: await runner.countInput(call.model, messages), outputTokens: (await registry.countTokens(call.model, produced)).tokens };
      },
    };
  }

  /** Admits the call, runs it whole and settles it on the engine's usage (the hold is released if it fails). */
  run<R extends { usage: TokenUsage }>(caller: Caller, call: EngineCall<R>, context: CallContext): Promise<Answered<R>> {
    return meteredCall(caller, labelled(call.metered, context), async (admission) => {
      const served = new ServedListener();
      const result = await call.run(admission.outputCap, served.context(context));
      served.announce(caller, call.model.id);
      const usage = served.settled(result.usage, 200);
      return { value: { result, model: call.askedAs ?? served.modelOr(call.model.id), outputCap: admission.outputCap }, usage };
    });
  }

  /** Admits the call, starts it, and resolves once the engine produced its first event (the hold is released if it fails before). */
  async open<R extends { usage: TokenUsage }>(caller: Caller, call: EngineCall<R>, context: CallContext): Promise<OpenedChat> {
    const admission = await admitCall(caller, labelled(call.metered, context));
    const served = new ServedListener();
    const events = call.stream(admission.outputCap, served.context(context));
    let first: IteratorResult<ChatStreamEvent>;
    try {
      first = await events.next();
    } catch (err) {
      admission.release();
      throw err;
    }
    served.announce(caller, call.model.id);
    const settlement = new StreamSettlement({
      caller,
      admission,
      served,
      signal: context.signal,
      count: (produced) => call.count(produced),
      logger: this.deps.logger,
      requestId: context.requestId,
    });
    const opened = { events, first, settlement, admission, signal: context.signal };
    return new OpenedStream(opened, call.askedAs ?? served.modelOr(call.model.id), admission.outputCap);
  }
}

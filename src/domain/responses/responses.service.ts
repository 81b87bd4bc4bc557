/**
 * POST /v1/responses: the Responses API translated to the chat path every engine speaks
 * (ChatRunner). A run is a sequence of events (`events()`): `response.created` once the
 * engine has answered (its first chunk, when streamed), the output items as they grow,
 * then `response.completed`, `response.incomplete` or `response.failed`. `create()`
 * consumes them and returns the final resource; `open()` starts them for SSE. Metered as
 * chat: held on the conversation and the cap, settled on the engine's usage; a stream
 * that ends early is billed for what it delivered (stream-settlement.ts).
 */
import type { Caller } from '../identity/caller.js';
import { meteredCall, type MeteredCall } from '../billing/meter.js';
import { toUnixSeconds } from '../shared/clock.js';
import type { InferenceServiceDeps } from '../completions/chat-completions.service.js';
import { meteredOf } from '../completions/chat-completions.service.js';
import { ChatRunner, withOutputCap, type Conversation, type PreparedCall } from '../completions/chat-runner.js';
import { openMeteredStream, recordEvent, type StreamDeps } from '../completions/metered-stream.js';
import { ServedListener } from '../completions/served-call.js';
import type { ResponsesRequestBody } from '../../wire/responses/body.js';
import { applyResult, applyStreamEvent } from './chat-output.js';
import { hexId, headOf } from './resource.js';
import { ResponseRun } from './response-run.js';
import { responsesRequestOf, type ResponsesRequest } from './responses-request.js';
import type { ResponsesContext, ResponseStreamEvent } from './responses.types.js';

export const RESPONSES_ROUTE = '/v1/responses';

function conversationOf(request: ResponsesRequest): Conversation {
  return {
    messages: request.messages,
    options: request.metadata,
    sampling: request.sampling,
    labels: request.labels,
    labelText: request.instructions ? { text: request.instructions, param: 'instructions' } : null,
    inputParam: 'input',
    truncation: request.truncation,
  };
}

export class ResponsesService {
  readonly #runner: ChatRunner;
  readonly #streamDeps: StreamDeps;

  constructor(private readonly deps: InferenceServiceDeps) {
    this.#runner = new ChatRunner(deps.registry);
    this.#streamDeps = { runner: this.#runner, registry: deps.registry, logger: deps.logger };
  }

  /** Runs the response and returns its final resource (`completed`, `incomplete` or `failed`). */
  async create(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): Promise<Record<string, unknown>> {
    let last: ResponseStreamEvent | undefined;
    for await (const event of this.events(caller, body, context)) last = event;
    return last!.response as Record<string, unknown>;
  }

  /**
   * Starts the events and resolves with them once the first is ready (the engine has
   * answered): a failure before then is thrown, an ordinary HTTP error.
   */
  async open(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>> {
    const events = this.events(caller, body, context);
    const first = await events.next();
    return replayed(first, events);
  }

  /**
   * The run's events. Whatever the outcome, `context.onSettled` is called once with the
   * final resource (a refusal before the first event included; it is then thrown).
   */
  async *events(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    const run = new ResponseRun(headOf(body, context.responseId ?? hexId('resp_'), this.#now()));
    try {
      const request = responsesRequestOf(body, context.priorItems);
      const model = this.deps.registry.require(request.model, 'responses');
      const call = await this.#runner.prepare(model, conversationOf(request), request.stream);
      const metered = meteredOf(call, request, context.route ?? RESPONSES_ROUTE, context.requestId);
      if (request.stream) yield* this.#streamed(caller, call, metered, context, run);
      else yield* this.#whole(caller, call, metered, context, run);
    } catch (err) {
      if (!run.started) run.refused(err);
      throw err;
    } finally {
      run.cancelled();
      await context.onSettled?.(run.resource()).catch((err: unknown) => this.deps.logger.error({ err, request_id: context.requestId }, 'settling a response failed'));
    }
  }

  async *#whole(caller: Caller, call: PreparedCall, metered: MeteredCall, context: ResponsesContext, run: ResponseRun): AsyncGenerator<ResponseStreamEvent> {
    const { result, served, outputCap } = await meteredCall(caller, metered, async (admission) => {
      const listener = new ServedListener();
      const output = await this.#runner.run(withOutputCap(call, admission.outputCap), listener.context(context));
      listener.announce(caller);
      const usage = listener.usage({ inputTokens: output.usage.inputTokens, outputTokens: output.usage.outputTokens, status: 200 });
      return { value: { result: output, served: listener, outputCap: admission.outputCap }, usage };
    });
    yield* run.start({ model: served.modelOr(call.model.id), outputCap });
    applyResult(run.output, result);
    yield* run.finish(result.finishReason, result.usage, this.#now());
  }

  async *#streamed(caller: Caller, call: PreparedCall, metered: MeteredCall, context: ResponsesContext, run: ResponseRun): AsyncGenerator<ResponseStreamEvent> {
    const { admission, served, events, first, settlement } = await openMeteredStream(caller, this.#streamDeps, call, metered, context);
    try {
      yield* run.start({ model: served.modelOr(call.model.id), outputCap: admission.outputCap });
      let finishReason = 'stop';
      for (let step = first; !step.done; step = await events.next()) {
        recordEvent(settlement, step.value);
        finishReason = applyStreamEvent(run.output, step.value) ?? finishReason;
        yield* run.output.drain();
      }
      const usage = await settlement.finish();
      yield* run.finish(finishReason, usage, this.#now());
    } catch (err) {
      // A client that left hears nothing more; otherwise the stream ends with its failure.
      if (context.signal.aborted) return;
      yield* run.fail(err, await settlement.close());
    } finally {
      await events.return(undefined).catch(() => {});
      await settlement.close();
    }
  }

  #now(): number {
    return toUnixSeconds(this.deps.clock.nowMs());
  }
}

/**
 * `first` and then the rest of `events`. Stopping it (return, or throw when the reply is
 * destroyed) stops the run, which settles what it delivered, even before it was first read.
 */
export function replayed(first: IteratorResult<ResponseStreamEvent>, events: AsyncGenerator<ResponseStreamEvent>): AsyncIterableIterator<ResponseStreamEvent> {
  let pending: IteratorResult<ResponseStreamEvent> | null = first;
  const stop = async (): Promise<IteratorResult<ResponseStreamEvent>> => {
    pending = null;
    return events.return(undefined);
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (pending === null) return events.next();
      const step = pending;
      pending = null;
      return step;
    },
    return: stop,
    throw: stop,
  };
}

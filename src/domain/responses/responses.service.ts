/**
 * A Responses API run over the one chat call (ChatCall): the conversation (`instructions`,
 * earlier turns, this request's input) prepared as a chat call, run whole or opened as a
 * stream, and the engine's answer read (answer-reader.ts) into the response's output by
 * the Responses wire's writer (the ResponseWriter port, injected). A run is a sequence of
 * events: `response.created` once the engine has answered (its first chunk, when
 * streamed), the output items as they grow, then `response.completed`,
 * `response.incomplete` or `response.failed`. `open()` resolves with them once the engine
 * answered; `create()` reads them to the final resource. Metered as chat: held on the
 * conversation and the cap, settled on the engine's usage; a stream that ends early is
 * billed for what it delivered. A warm-up (`generate: false`, WebSocket mode) is checked
 * and prepared like a run, and completes at once with no output, unbilled.
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import type { Clock } from '../shared/clock.js';
import { toUnixSeconds } from '../shared/clock.js';
import type { TokenUsage } from '../models/inference-backend.port.js';
import { readResult, readStreamEvent, type AnswerEvent } from '../completions/answer-reader.js';
import type { Answered, ChatCall, OpenedChat } from '../completions/chat-call.js';
import type { ChatResult, Conversation } from '../completions/chat-runner.js';
import { randomString } from '../shared/ids.js';
import { invalidRequest } from '../shared/errors.js';
import { messagesOfItems, type OpenReasoning } from './input-items.js';
import type { ReasoningSeal } from './reasoning-seal.port.js';
import type { ResponseRunWriter, ResponseWriter } from './response-writer.port.js';
import type { ResponsesContext, ResponsesRequest, ResponseStreamEvent } from './responses.types.js';

export const RESPONSES_ROUTE = '/v1/responses';

export const newResponseId = (): string => `resp_${randomString(24, 'hex')}`;

export interface ResponsesServiceDeps {
  chat: ChatCall;
  /** The Responses wire's writer: what the run's events and object look like. */
  writer: ResponseWriter;
  clock: Clock;
  logger: Pick<Logger, 'error'>;
  /** Hosted tools (web_search, …): left out and named in `x-sluice-dropped-tools` (default), or refused. */
  hostedTools?: 'drop' | 'refuse';
  /** Seals reasoning for clients that carry it without storage; absent: none is sealed, and sealed input is refused. */
  reasoning?: ReasoningSeal;
}

export const DROPPED_TOOLS_HEADER = 'x-sluice-dropped-tools';

/**
 * The conversation: `instructions` first, then the earlier turns, then this request's
 * input, with the reasoning its items carry opened; and the session it belongs to.
 */
function conversationOf(request: ResponsesRequest, context: ResponsesContext, open: OpenReasoning): Conversation {
  const { priorItems } = context;
  const input = typeof request.input === 'string' ? request.messages : messagesOfItems(request.input, 'input', open);
  const messages = priorItems?.length ? [...messagesOfItems(priorItems, 'previous_response_id', open), ...input] : input;
  const conversation: Conversation = {
    messages: request.instructions ? [{ role: 'system', content: request.instructions }, ...messages] : messages,
    options: request.metadata,
    sampling: request.sampling,
    labels: request.labels,
    labelText: request.instructions ? { text: request.instructions, param: 'instructions' } : null,
    inputParam: 'input',
    truncation: request.truncation,
  };
  // The stored path's hints add the chain's root to the request's own.
  const affinity = context.affinity ?? request.affinity;
  if (affinity) conversation.affinity = affinity;
  return conversation;
}

/** Reads `events` into the run's output; returns the finish reason and usage when they come. */
function readInto(run: ResponseRunWriter, events: readonly AnswerEvent[], read: { finishReason: string; usage: TokenUsage | null }): void {
  for (const event of events) {
    if (event.type === 'finish') read.finishReason = event.reason;
    else if (event.type === 'usage') read.usage = event.usage;
    else run.read(event);
  }
}

export class ResponsesService {
  constructor(private readonly deps: ResponsesServiceDeps) {}

  /** Runs the response and returns its final resource (`completed`, `incomplete` or `failed`). */
  async create(caller: Caller, request: ResponsesRequest, context: ResponsesContext): Promise<Record<string, unknown>> {
    let last: ResponseStreamEvent | undefined;
    for await (const event of await this.open(caller, request, context)) last = event;
    return last!.response as Record<string, unknown>;
  }

  /** The run's events, opened at the first read (a refusal is thrown by it). */
  async *events(caller: Caller, request: ResponsesRequest, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    yield* await this.open(caller, request, context);
  }

  /**
   * Starts the run and resolves with its events once the engine has answered: a refusal
   * before then is thrown, an ordinary HTTP error. Whatever the outcome, `context.onSettled`
   * is called once with the final resource (a refusal included), when the events end.
   */
  async open(caller: Caller, request: ResponsesRequest, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>> {
    const { reasoning } = this.deps;
    const seal = request.sealReasoning && reasoning ? (text: string) => reasoning.seal(text) : null;
    const run = this.deps.writer.run(request, context.responseId ?? newResponseId(), this.#now(), seal);
    let answer: Answered<ChatResult> | OpenedChat;
    try {
      this.#hostedTools(caller, request);
      const origin = { route: context.route ?? RESPONSES_ROUTE, requestId: context.requestId };
      const conversation = conversationOf(request, context, this.#openReasoning);
      const call = await this.deps.chat.prepare(request.model, 'responses', conversation, request.stream, origin);
      if (request.generate === false) return this.#warmedUp(run, call.model.id, context);
      answer = request.stream ? await this.deps.chat.open(caller, call, context) : await this.deps.chat.run(caller, call, context);
    } catch (err) {
      run.refused(err);
      await this.#settled(run, context);
      throw err;
    }
    return 'close' in answer ? this.#streamed(run, answer, context) : this.#whole(run, answer, context);
  }

  async *#whole(run: ResponseRunWriter, answered: Answered<ChatResult>, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    let settled = false;
    try {
      yield* run.start(answered);
      const read = { finishReason: answered.result.finishReason, usage: null };
      readInto(run, readResult(answered.result), read);
      const finished = run.finish(read.finishReason, answered.result.usage, this.#now());
      settled = true;
      await this.#settled(run, context);
      yield* finished;
    } finally {
      if (!settled) await this.#settled(run, context);
    }
  }

  /**
   * The terminal events (`response.completed`, `response.incomplete`) go out only once the
   * call is settled and the response stored: a client that continues from it at once (the
   * next `response.create` on a WebSocket, a `previous_response_id`) finds both done.
   */
  async *#streamed(run: ResponseRunWriter, opened: OpenedChat, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    let settled = false;
    try {
      yield* run.start(opened);
      const read: { finishReason: string; usage: TokenUsage | null } = { finishReason: 'stop', usage: null };
      for await (const event of opened) {
        readInto(run, readStreamEvent(event), read);
        yield* run.drain();
      }
      const finished = run.finish(read.finishReason, read.usage!, this.#now());
      settled = true;
      try {
        await opened.close();
      } finally {
        await this.#settled(run, context);
      }
      yield* finished;
    } catch (err) {
      // A settlement that failed after the answer ended is the transport's error to report.
      if (settled) throw err;
      // A client that left hears nothing more; otherwise the stream ends with its failure.
      if (context.signal.aborted) return;
      yield* run.fail(err, await opened.close());
    } finally {
      if (!settled) {
        await opened.close();
        await this.#settled(run, context);
      }
    }
  }

  /**
   * A warm-up (`generate: false`): the request was checked and its conversation prepared,
   * and nothing is generated or billed; it completes at once with no output.
   */
  async *#warmedUp(run: ResponseRunWriter, model: string, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    let settled = false;
    try {
      yield* run.start({ model });
      const finished = run.warmedUp(this.#now());
      settled = true;
      await this.#settled(run, context);
      yield* finished;
    } finally {
      if (!settled) await this.#settled(run, context);
    }
  }

  /** Hosted tools are refused, or left out and named to the client. */
  #hostedTools(caller: Caller, request: ResponsesRequest): void {
    const [first] = request.hostedTools;
    if (!first) return;
    if (this.deps.hostedTools === 'refuse') {
      throw invalidRequest(`${first.param} "${first.type}" is a hosted tool, which this server does not run (responses.hosted_tools is refuse)`, first.param);
    }
    caller.reply?.set({ [DROPPED_TOOLS_HEADER]: [...new Set(request.hostedTools.map((tool) => tool.type))].join(', ') });
  }

  readonly #openReasoning: OpenReasoning = (sealed, param) => {
    if (!this.deps.reasoning) throw invalidRequest(`${param} cannot be opened: this server seals no reasoning`, param);
    return this.deps.reasoning.open(sealed, param);
  };

  /** The run ends: cancelled if it stands unfinished, and its final resource handed to `onSettled`. */
  async #settled(run: ResponseRunWriter, context: ResponsesContext): Promise<void> {
    run.cancelled();
    await context.onSettled?.(run.resource()).catch((err: unknown) => this.deps.logger.error({ err, request_id: context.requestId }, 'settling a response failed'));
  }

  #now(): number {
    return toUnixSeconds(this.deps.clock.nowMs());
  }
}

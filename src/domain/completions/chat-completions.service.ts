/**
 * POST /v1/chat/completions, and the ChatCompletionsPort the batch runner calls: parse,
 * route, refuse what cannot run, admit through the caller's meter, run, settle, answer.
 * Streaming has the same steps; the response is committed only once the backend produced
 * its first event, so failures before that are ordinary HTTP errors.
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import { meteredCall, type MeteredCall } from '../billing/meter.js';
import type { Clock } from '../shared/clock.js';
import { toUnixSeconds } from '../shared/clock.js';
import { invalidRequest } from '../shared/errors.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { ChatCompletionsContext, ChatCompletionsPort } from './chat-completions.port.js';
import type { ChatCompletionRequestBody } from '../../wire/chat-completions/body.js';
import { chatRequestOf, type ChatRequest } from './chat-request.js';
import { ChatRunner, withOutputCap, type Conversation, type PreparedCall } from './chat-runner.js';
import { ChunkWriter, chatCompletionWire, newChatCompletionId } from './chat-wire.js';
import { CONVERSATION_FRAMING_TOKENS, IMAGE_PART_TOKENS, chatInputOf, meteredCallOf, outputCapOf } from './metered-call.js';
import { ServedListener } from './served-call.js';
import { openMeteredStream, recordEvent, type OpenedStream, type StreamDeps } from './metered-stream.js';
import { releasedIfNeverRead } from './stream-settlement.js';

export const CHAT_ROUTE = '/v1/chat/completions';

export interface InferenceServiceDeps {
  registry: ModelResolver;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'error'>;
}

export function conversationOf(request: ChatRequest): Conversation {
  const systemIndex = request.messages.findIndex((m) => m.role === 'system');
  return {
    messages: request.messages,
    options: request.options,
    sampling: request.sampling,
    labels: request.labels,
    labelText:
      systemIndex === -1 ? null : { text: request.messages[systemIndex]!.content, param: `messages[${systemIndex}].content` },
    inputParam: 'messages',
    truncation: 'disabled',
  };
}

export class ChatCompletionsService implements ChatCompletionsPort {
  readonly #runner: ChatRunner;
  readonly #streamDeps: StreamDeps;

  constructor(private readonly deps: InferenceServiceDeps) {
    this.#runner = new ChatRunner(deps.registry);
    this.#streamDeps = { runner: this.#runner, registry: deps.registry, logger: deps.logger };
  }

  async create(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<Record<string, unknown>> {
    const request = chatRequestOf(body);
    if (request.stream) throw invalidRequest('stream must be false on this path', 'stream');
    const call = await this.#prepare(request, false);
    return meteredCall(caller, meteredOf(call, request, context.route ?? CHAT_ROUTE, context.requestId), async (admission) => {
      const served = new ServedListener();
      const result = await this.#runner.run(withOutputCap(call, admission.outputCap), served.context(context));
      served.announce(caller);
      const value = chatCompletionWire(newChatCompletionId(), toUnixSeconds(this.deps.clock.nowMs()), served.modelOr(call.model.id), result);
      return { value, usage: served.usage({ inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, status: 200 }) };
    });
  }

  /**
   * Starts a streamed completion and resolves once the backend produced its first event.
   * Iterate the result for `chat.completion.chunk` objects; abort `context.signal` when
   * the client goes away (the upstream is stopped and the tokens so far are billed).
   */
  async openStream(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<AsyncIterable<Record<string, unknown>>> {
    const request = chatRequestOf(body);
    const call = await this.#prepare(request, true);
    const opened = await openMeteredStream(caller, this.#streamDeps, call, meteredOf(call, request, context.route ?? CHAT_ROUTE, context.requestId), context);
    return releasedIfNeverRead(this.#relay(request, call, opened), opened.admission, context.signal);
  }

  #prepare(request: ChatRequest, streaming: boolean): Promise<PreparedCall> {
    const model = this.deps.registry.require(request.model, 'chat');
    return this.#runner.prepare(model, conversationOf(request), streaming);
  }

  async *#relay(request: ChatRequest, call: PreparedCall, { served, events, first, settlement }: OpenedStream): AsyncGenerator<Record<string, unknown>> {
    const writer = new ChunkWriter(newChatCompletionId(), toUnixSeconds(this.deps.clock.nowMs()), served.modelOr(call.model.id), request.includeUsage);
    try {
      for (let step = first; !step.done; step = await events.next()) {
        const event = step.value;
        recordEvent(settlement, event);
        if (event.type === 'chunk') yield writer.carried(event.carried);
        else if (event.type === 'delta') yield writer.delta(event.content, event.reasoning, event.toolCalls);
        else if (event.type === 'finish') yield writer.finish(event.finishReason);
      }
      const usage = await settlement.finish();
      if (request.includeUsage) yield writer.usage(usage);
    } finally {
      await events.return(undefined).catch(() => {});
      await settlement.close();
    }
  }
}

/**
 * The call's credit estimate: its messages (a conversation's template included), parts
 * and tools, or its task input; and its output cap (times `n`).
 */
export function meteredOf(call: PreparedCall, request: { sampling: Record<string, unknown> }, route: string, requestId: string): MeteredCall {
  const cap = outputCapOf(call.model, request.sampling);
  if (call.kind === 'task') return meteredCallOf(call.model, route, requestId, [call.input], cap);
  const { texts, images } = chatInputOf(call.messages, request.sampling);
  return meteredCallOf(call.model, route, requestId, texts, cap, CONVERSATION_FRAMING_TOKENS + images * IMAGE_PART_TOKENS);
}

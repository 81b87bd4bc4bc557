/**
 * POST /v1/chat/completions over the domain's one chat call: the body mapped to a chat
 * request (mapper.ts), run or opened by the ChatCall, and written as `chat.completion` or
 * `chat.completion.chunk`s (writer.ts). The route, the MCP chat tool and every batch line
 * on this endpoint go through the same object (same routing, validation, quota check,
 * metering and credit debit).
 */
import type { Caller } from '../../domain/identity/caller.js';
import type { Clock } from '../../domain/shared/clock.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { invalidRequest } from '../../domain/shared/errors.js';
import { conversationOf } from '../../domain/completions/chat-request.js';
import type { ChatCall } from '../../domain/completions/chat-call.js';
import type { ChatCompletionRequestBody } from './body.js';
import { chatRequestOf } from './mapper.js';
import { ChunkWriter, chatCompletionWire, newChatCompletionId } from './writer.js';

export const CHAT_ROUTE = '/v1/chat/completions';

export interface ChatCompletionsContext {
  requestId: string;
  signal: AbortSignal;
  /** Where the call came from, for usage records ("/v1/chat/completions", "batch"). */
  route?: string;
  /** The coding agent's session (Claude Code's `X-Claude-Code-Session-Id`): usage records and session affinity. */
  sessionId?: string;
  /** The call's tags and end user, recorded on its usage. */
  tags?: readonly string[];
  endUser?: string;
}

/** The synchronous path as a port: what the MCP chat tool and the batch runner call. */
export interface ChatCompletionsPort {
  /**
   * Runs a validated chat-completion body (non-streaming): admits it through the
   * caller's meter, runs it and settles its usage. Returns the chat.completion wire
   * object, or throws AppError (kind and code say what failed; `retryable` for upstream
   * 5xx/429/connection).
   */
  create(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<Record<string, unknown>>;
}

const originOf = (context: ChatCompletionsContext) => ({ route: context.route ?? CHAT_ROUTE, requestId: context.requestId });

export class ChatCompletionsService implements ChatCompletionsPort {
  constructor(private readonly deps: { chat: ChatCall; clock: Clock }) {}

  async create(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<Record<string, unknown>> {
    const request = chatRequestOf(body, context.sessionId);
    if (request.stream) throw invalidRequest('stream must be false on this path', 'stream');
    const call = await this.deps.chat.prepare(request.model, 'chat', conversationOf(request), false, originOf(context));
    const { result, model } = await this.deps.chat.run(caller, call, context);
    return chatCompletionWire(newChatCompletionId(), this.#now(), model, result);
  }

  /**
   * Starts a streamed completion and resolves once the backend produced its first event.
   * Iterate the result for `chat.completion.chunk` objects; abort `context.signal` when
   * the client goes away (the upstream is stopped and the tokens so far are billed).
   */
  async openStream(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<AsyncIterable<Record<string, unknown>>> {
    const request = chatRequestOf(body, context.sessionId);
    const call = await this.deps.chat.prepare(request.model, 'chat', conversationOf(request), true, originOf(context));
    const opened = await this.deps.chat.open(caller, call, context);
    const writer = new ChunkWriter(newChatCompletionId(), this.#now(), opened.model, request.includeUsage);
    return opened.written((event) => writer.event(event));
  }

  #now(): number {
    return toUnixSeconds(this.deps.clock.nowMs());
  }
}

/**
 * The synchronous chat-completions path as a port: `POST /v1/chat/completions`, the MCP
 * chat tool and every batch line on that endpoint go through the same implementation
 * (same routing, validation, quota check, metering and credit debit).
 */
import type { Caller } from '../identity/caller.js';
import type { ChatCompletionRequestBody } from '../../wire/chat-completions/body.js';

export interface ChatCompletionsContext {
  requestId: string;
  signal: AbortSignal;
  /** Where the call came from, for usage records ("/v1/chat/completions", "batch"). */
  route?: string;
}

export interface ChatCompletionsPort {
  /**
   * Runs a validated chat-completion body (non-streaming): admits it through
   * the caller's meter, runs it and settles its usage. Returns the chat.completion wire object, or
   * throws AppError (kind and code say what failed; `retryable` for upstream 5xx/429/connection).
   */
  create(caller: Caller, body: ChatCompletionRequestBody, context: ChatCompletionsContext): Promise<Record<string, unknown>>;
}

/**
 * The synchronous chat-completions path as a port: `POST /v1/chat/completions` and
 * every batch line go through the same implementation (same routing, validation,
 * quota check, metering and credit debit).
 */
import type { Principal } from '../auth/authenticator.js';
import type { UsageRecord } from '../../storage/db/repositories/usage.repository.js';

export interface ChatCompletionsContext {
  requestId: string;
  signal: AbortSignal;
  /** Where the call came from, for usage records ("/v1/chat/completions", "batch"). */
  route?: string;
  /**
   * Given, the call's usage record is pushed here instead of written: the caller writes
   * it with its own result (batch lines) and reports it with BillingService.committed().
   * An explicit parameter, not AsyncLocalStorage, which on Node 20 makes every promise
   * of the process about three times as costly once it has first been used.
   */
  usageSink?: UsageRecord[];
}

export interface ChatCompletionsPort {
  /**
   * Validates `body` as a chat-completion request (non-streaming), checks quota, runs
   * it, records usage and debits credits. Returns the chat.completion wire object, or
   * throws AppError (kind and code say what failed; `retryable` for upstream 5xx/429/connection).
   */
  create(principal: Principal, body: unknown, context: ChatCompletionsContext): Promise<Record<string, unknown>>;
}

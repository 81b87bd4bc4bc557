/**
 * What the responses service needs of the Responses wire's writer (src/wire/responses/
 * writer.ts): a run that turns the chat call's answer events into `response.*` stream
 * events and the Response object, and the object a queued background response answers
 * with. The domain decides when a run starts, reads, ends, fails or is cancelled; the
 * writer decides what each looks like on the wire. The composition injects it.
 */
import type { AnswerEvent } from '../completions/answer-reader.js';
import type { TokenUsage } from '../models/inference-backend.port.js';
import type { ResponsesRequest, ResponseStreamEvent } from './responses.types.js';

/** One response from start to end; each step returns the stream events it produced, numbered in order. */
export interface ResponseRunWriter {
  /** `response.created` and `response.in_progress`, once the engine has answered. */
  start(served: { model: string; outputCap?: number }): ResponseStreamEvent[];
  /** One content event of the answer (text, reasoning, refusal, tool call); its events wait for `drain`. */
  read(event: AnswerEvent): void;
  /** The events produced since the last drain. */
  drain(): ResponseStreamEvent[];
  /** The answer ended: its items closed, then `response.completed` (or `response.incomplete`). */
  finish(finishReason: string, usage: TokenUsage, completedAt: number): ResponseStreamEvent[];
  /** A warm-up (`generate: false`) ended: `response.completed` with no output and no usage. */
  warmedUp(completedAt: number): ResponseStreamEvent[];
  /** The run failed after it started: its error event, then `response.failed`. */
  fail(err: unknown, usage: TokenUsage | null): ResponseStreamEvent[];
  /** The run failed before it started (nothing was produced). */
  refused(err: unknown): void;
  /** The client left (or the caller stopped reading) before the end. */
  cancelled(): void;
  /** The Response object as it stands (what `onSettled` and a stored response keep). */
  resource(): Record<string, unknown>;
}

export interface ResponseWriter {
  /**
   * A run of `request` under `id`, created at `createdAt` (Unix seconds); `seal` (or null)
   * seals each reasoning item's text into its `encrypted_content`.
   */
  run(request: ResponsesRequest, id: string, createdAt: number, seal: ((text: string) => string) | null): ResponseRunWriter;
  /** The object a background response answers with at once: `queued`, the request's settings, no output. */
  queued(request: ResponsesRequest, id: string, createdAt: number): Record<string, unknown>;
}

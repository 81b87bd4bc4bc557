/**
 * How a streamed call is billed, the same on every streamed route (chat, legacy
 * completions, responses): the chat call (chat-call.ts) creates one StreamSettlement once
 * its stream is committed, tells it what it delivered and the engine's usage, then either `finish()`es
 * (the stream ended normally) or just reaches `close()` in its `finally`:
 *
 *   const settlement = new StreamSettlement({ caller, admission, served, signal, count, logger, requestId });
 *   try {
 *     for await (const event of events) {
 *       if (event.type === 'usage') settlement.reported(event.usage);
 *       else { settlement.delivered(textOf(event)); yield ...; }
 *     }
 *     const usage = await settlement.finish();   // 200: the engine's usage, else counted
 *     ...yield the usage chunk...
 *   } finally {
 *     await settlement.close();                  // ended early: 499/502 for what was delivered
 *   }
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import { settleCall, type Admission } from '../billing/meter.js';
import type { TokenUsage } from '../models/inference-backend.port.js';
import type { ServedListener } from './served-call.js';

/** Status recorded on the usage of a stream the client abandoned (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;
/** Status recorded on the usage of a stream its engine cut after it had started. */
export const UPSTREAM_CUT = 502;

export interface StreamSettlementDeps {
  caller: Caller;
  admission: Admission;
  /** Who served the call: the usage record names its model and deployment. */
  served: ServedListener;
  /** The client's signal: aborted means the client left (499); otherwise an early end is the engine's (502). */
  signal: AbortSignal;
  /** The call's usage counted from the text it produced, for when the engine reports none or the stream ended early. */
  count: (produced: string) => Promise<TokenUsage>;
  logger: Pick<Logger, 'error'>;
  requestId: string;
}

export class StreamSettlement {
  #produced = '';
  #usage: TokenUsage | null = null;
  #done = false;
  #closed: Promise<TokenUsage | null> | null = null;

  constructor(private readonly deps: StreamSettlementDeps) {}

  /** Text the stream delivered (content, reasoning, a completion's text): what an estimate counts. */
  delivered(text: string): void {
    this.#produced += text;
  }

  /** The usage the engine reported (the last report wins). */
  reported(usage: TokenUsage): void {
    this.#usage = usage;
  }

  /**
   * The stream ended normally: settles (status 200) on the engine's usage, or on the
   * usage counted from what was delivered when it reported none. Returns the usage billed.
   */
  async finish(): Promise<TokenUsage> {
    const usage = this.#usage ?? (await this.deps.count(this.#produced));
    this.#done = true;
    await this.#settle(usage, 200);
    return usage;
  }

  /**
   * Ends the settlement; call it in the relay's `finally`. A stream that did not finish
   * is billed for what was delivered: counted tokens, status 499 when the client left,
   * 502 when the engine cut it after its first event. An engine cut before any text was
   * delivered costs nothing. No-op after finish(). Returns the usage billed, if any (a
   * second call, the same).
   */
  close(): Promise<TokenUsage | null> {
    if (this.#closed) return this.#closed;
    if (this.#done) return Promise.resolve(null);
    this.#done = true;
    this.#closed = this.#end();
    return this.#closed;
  }

  async #end(): Promise<TokenUsage | null> {
    const { admission, signal } = this.deps;
    if (!signal.aborted && this.#produced === '') {
      admission.release();
      return null;
    }
    try {
      const usage = await this.deps.count(this.#produced);
      await this.#settle(usage, signal.aborted ? CLIENT_CLOSED : UPSTREAM_CUT);
      return usage;
    } catch (err) {
      admission.release();
      this.deps.logger.error({ err, request_id: this.deps.requestId }, 'metering an interrupted stream failed');
      return null;
    }
  }

  async #settle(usage: TokenUsage, status: number): Promise<void> {
    const { caller, admission, served } = this.deps;
    await settleCall(caller, admission, served.settled(usage, status));
  }
}

/**
 * A metered stream of a prepared chat call, shared by chat completions and responses:
 * admitted on the call's estimate, opened once the engine produced its first event (so a
 * failure before it is an ordinary HTTP error), and settled when it ends: on the engine's
 * usage when it finished, or, when it ended early, on what was delivered (the client left:
 * 499; the engine failed after its first event: 502; nothing produced: released).
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import { admitCall, settleCall, type Admission, type MeteredCall } from '../billing/meter.js';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../models/inference-backend.port.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import { withOutputCap, type ChatRunner, type PreparedCall } from './chat-runner.js';
import { ServedListener } from './served-call.js';

/** Status recorded on the usage of a stream the client abandoned (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;
/** Status recorded on the usage of a stream its engine cut after it had started. */
export const UPSTREAM_CUT = 502;

export interface StreamDeps {
  runner: ChatRunner;
  registry: ModelResolver;
  logger: Pick<Logger, 'error'>;
}

export interface OpenedStream {
  admission: Admission;
  served: ServedListener;
  events: AsyncGenerator<ChatStreamEvent>;
  first: IteratorResult<ChatStreamEvent>;
  settlement: StreamSettlement;
}

/** Admits `call`, starts it, and resolves once the engine produced its first event (the hold is released if it fails before). */
export async function openMeteredStream(caller: Caller, deps: StreamDeps, call: PreparedCall, metered: MeteredCall, context: CallContext): Promise<OpenedStream> {
  const admission = await admitCall(caller, metered);
  const served = new ServedListener();
  const events = deps.runner.stream(withOutputCap(call, admission.outputCap), served.context(context));
  let first: IteratorResult<ChatStreamEvent>;
  try {
    first = await events.next();
  } catch (err) {
    admission.release();
    throw err;
  }
  served.announce(caller);
  return { admission, served, events, first, settlement: new StreamSettlement(caller, admission, served, call, deps, context) };
}

/** What a stream produced and used, and its one settlement. */
export class StreamSettlement {
  #usage: TokenUsage | null = null;
  #produced = '';
  #ended = false;

  constructor(
    private readonly caller: Caller,
    private readonly admission: Admission,
    private readonly served: ServedListener,
    private readonly call: PreparedCall,
    private readonly deps: StreamDeps,
    private readonly context: CallContext,
  ) {}

  /** Counts what an event produced, and keeps the engine's usage. */
  record(event: ChatStreamEvent): void {
    if (event.type === 'chunk') this.#produced += event.text;
    else if (event.type === 'delta') this.#produced += (event.content ?? '') + (event.reasoning ?? '');
    else if (event.type === 'usage') this.#usage = event.usage;
  }

  /** The stream finished: settles on the engine's usage (counted when it sent none). */
  async settle(): Promise<TokenUsage> {
    const usage = this.#usage ?? (await this.#counted());
    this.#ended = true;
    await settleCall(this.caller, this.admission, this.served.usage({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, status: 200 }));
    return usage;
  }

  /** The stream ended early (or settled already): bills what was delivered, once. Returns that usage, if any. */
  async end(): Promise<TokenUsage | null> {
    if (this.#ended) return null;
    this.#ended = true;
    if (!this.context.signal.aborted && this.#produced === '') {
      this.admission.release();
      return null;
    }
    try {
      const usage = await this.#counted();
      const status = this.context.signal.aborted ? CLIENT_CLOSED : UPSTREAM_CUT;
      await settleCall(this.caller, this.admission, this.served.usage({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, status }));
      return usage;
    } catch (err) {
      this.admission.release();
      this.deps.logger.error({ err, request_id: this.context.requestId }, 'metering an aborted stream failed');
      return null;
    }
  }

  async #counted(): Promise<TokenUsage> {
    const { call } = this;
    const messages = call.kind === 'chat' ? call.messages : [{ role: 'user' as const, content: call.input }];
    return {
      inputTokens: await this.deps.runner.countInput(call.model, messages),
      outputTokens: (await this.deps.registry.countTokens(call.model, this.#produced)).tokens,
    };
  }
}

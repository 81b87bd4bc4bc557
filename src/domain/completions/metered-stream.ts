/**
 * Opening a metered stream of a prepared chat call, shared by chat completions and
 * responses: admitted on the call's estimate, started, and handed over once the engine
 * produced its first event (so a failure before it is an ordinary HTTP error, and its
 * hold is released). Its StreamSettlement (stream-settlement.ts) bills it when it ends.
 */
import type { Logger } from 'pino';
import type { Caller } from '../identity/caller.js';
import { admitCall, type Admission, type MeteredCall } from '../billing/meter.js';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../models/inference-backend.port.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import { withOutputCap, type ChatRunner, type PreparedCall } from './chat-runner.js';
import { ServedListener } from './served-call.js';
import { StreamSettlement } from './stream-settlement.js';

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
  const settlement = new StreamSettlement({
    caller,
    admission,
    served,
    signal: context.signal,
    count: (produced) => countedUsage(deps, call, produced),
    logger: deps.logger,
    requestId: context.requestId,
  });
  return { admission, served, events, first, settlement };
}

/** Tells the settlement what a stream event delivered, or the usage it reported. */
export function recordEvent(settlement: StreamSettlement, event: ChatStreamEvent): void {
  if (event.type === 'chunk') settlement.delivered(event.text);
  else if (event.type === 'delta') settlement.delivered((event.content ?? '') + (event.reasoning ?? '') + (event.toolCalls?.map((c) => c.name + c.arguments).join('') ?? ''));
  else if (event.type === 'usage') settlement.reported(event.usage);
}

/** The call's usage counted from its input and the text it produced. */
async function countedUsage(deps: StreamDeps, call: PreparedCall, produced: string): Promise<TokenUsage> {
  const messages = call.kind === 'chat' ? call.messages : [{ role: 'user' as const, content: call.input }];
  return {
    inputTokens: await deps.runner.countInput(call.model, messages),
    outputTokens: (await deps.registry.countTokens(call.model, produced)).tokens,
  };
}

/**
 * Which model and engine served a call, as the upstream router reports it: the answer
 * names the model that served (or the alias asked for), `x-sluice-model` names the one that
 * served, a fallback is announced in `x-sluice-fallback` too, and the
 * usage record names the model (billed at its price) and the deployment.
 */
import type { CallContext, ServedCall, TokenUsage } from '../models/inference-backend.port.js';
import type { SettledUsage } from '../billing/meter.js';
import type { Caller } from '../identity/caller.js';
import { toReply } from '../billing/meter.js';

export const FALLBACK_HEADER = 'x-sluice-fallback';
/** The model that served the call (the answer names the one asked for, an alias perhaps). */
export const SERVED_MODEL_HEADER = 'x-sluice-model';

export class ServedListener {
  served: ServedCall | null = null;
  readonly listen: (served: ServedCall) => void;

  constructor() {
    // Set here, not as a field initializer: tsx (tests, benches, dev) names a field's arrow
    // with an Object.defineProperty per instance, and every upstream call makes one listener.
    this.listen = (served) => {
      this.served = served;
    };
  }

  /** `context` with this listener told who serves. */
  context<C extends CallContext>(context: C): C {
    // A copy with the listener set on it: one object per call, not a second literal to copy from.
    const told = Object.assign({}, context);
    told.onServed = this.listen;
    return told;
  }

  /** The model id the answer names. */
  modelOr(requested: string): string {
    return this.served?.model ?? requested;
  }

  /** Names the model that served (`requested` unless a fallback did) on the caller's reply, before a stream is committed. */
  announce(caller: Caller, requested: string): void {
    const served = this.served;
    toReply(caller, served?.fallback ? { [SERVED_MODEL_HEADER]: served.model, [FALLBACK_HEADER]: served.model } : { [SERVED_MODEL_HEADER]: requested });
  }

  /** The engine's usage settled with `status`: its tokens, cached input apart. */
  settled(usage: TokenUsage, status: number): SettledUsage {
    const settled: SettledUsage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, status };
    if (usage.cachedTokens) settled.cachedInputTokens = usage.cachedTokens;
    if (usage.cacheWriteTokens) settled.cacheWriteTokens = usage.cacheWriteTokens;
    return this.usage(settled);
  }

  /** The usage to settle, naming the model and deployment that served. */
  usage(usage: SettledUsage): SettledUsage {
    const served = this.served;
    if (!served) return usage;
    usage.deployment = served.deployment;
    if (served.fallback) usage.model = served.model;
    return usage;
  }
}

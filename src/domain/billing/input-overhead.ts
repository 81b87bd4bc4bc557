/**
 * What upstreams count as input beyond a call's estimate, learned per model. The estimate
 * bounds a text's tokens by its bytes and adds fixed framing, but a chat template may add
 * more of its own (a default system prompt, say), which only the upstream's usage shows.
 * A call admitted on too low an estimate can cost more than its hold, and a burst admitted
 * before any of its calls settles can then be admitted for more than the balance pays for.
 * So the largest excess seen for a model is added to the estimates of its later calls. In
 * memory: each process learns from its first calls of a model.
 */
import type { MeteredCall, SettledUsage } from './meter.js';

/** An excess above this is not a template's doing; it is not learned (a call's own cost still pays for it). */
const MAX_LEARNED_TOKENS = 4_096;

export class InputOverheads {
  readonly #excess = new Map<string, number>();

  /** The call with the excess learned for its model added to its input estimate. */
  estimateOf(call: MeteredCall): MeteredCall {
    const excess = this.#excess.get(call.model);
    return excess === undefined || call.estimateMicros !== undefined ? call : { ...call, inputTokens: call.inputTokens + excess };
  }

  /** Learns from a settled call (`call` as estimated by estimateOf) how far its model's upstream counts past the estimate. */
  observe(call: MeteredCall, usage: SettledUsage): void {
    const excess = usage.inputTokens - call.inputTokens;
    if (excess <= 0 || call.estimateMicros !== undefined || usage.costMicros !== undefined) return;
    const learned = (this.#excess.get(call.model) ?? 0) + excess;
    if (learned <= MAX_LEARNED_TOKENS) this.#excess.set(call.model, learned);
  }
}

/**
 * The metering port. A call is admitted before any billable work (the meter may refuse
 * with an AppError, e.g. `insufficient_quota` or a 402 carrying a payment challenge) and
 * settled once when it ends: with its actual usage on success or client abort, or
 * released on failure. Services run every billable call through meteredCall() or, for a
 * stream whose end comes later, through the Admission directly.
 */
import type { Principal } from '../access/caller.js';
import type { UsageRecord } from './usage.types.js';

/** What is known of a call at admission: enough to price its worst case. */
export interface MeteredCall {
  model: string;
  /** Usage records name the route ("/v1/chat/completions", "batch"). */
  route: string;
  requestId: string;
  /** Upper estimate of the input tokens. */
  inputTokens: number;
  /** The output cap: the request's max tokens, else the model's default. */
  maxOutputTokens: number;
  /** A fixed worst-case cost instead of the token estimate (e.g. audio, priced per second). */
  estimateMicros?: number;
}

export interface SettledUsage {
  inputTokens: number;
  outputTokens: number;
  /** HTTP status recorded with the usage (200, or 499 for an abandoned stream). */
  status: number;
  /** Overrides the model's token price (e.g. audio billed per second). */
  costMicros?: number;
}

export interface Admission {
  /**
   * Replaces the admission's hold with the actual cost. Once. Resolves with the usage
   * record, when the meter keeps one.
   */
  settle(usage: SettledUsage): Promise<UsageRecord | null>;
  /** Ends the admission without charge (the call failed). Idempotent; no-op after settle. */
  release(): void;
}

export interface Meter {
  /** Throws (or rejects with) an AppError when the call may not run. */
  admit(principal: Principal, call: MeteredCall): Admission | Promise<Admission>;
}

/**
 * Admits `call`, runs `work`, settles with the usage it reports, or releases the
 * admission when `work` fails. Returns what `work` returned.
 */
export async function meteredCall<T>(
  meter: Meter,
  principal: Principal,
  call: MeteredCall,
  work: () => Promise<{ value: T; usage: SettledUsage }>,
): Promise<T> {
  const admission = await meter.admit(principal, call);
  let outcome: { value: T; usage: SettledUsage };
  try {
    outcome = await work();
  } catch (err) {
    admission.release();
    throw err;
  }
  await admission.settle(outcome.usage);
  return outcome.value;
}

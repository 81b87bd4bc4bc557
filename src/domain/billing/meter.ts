/**
 * The metering port. A call is admitted before any billable work (the meter may refuse
 * with an AppError, e.g. `insufficient_quota` or a 402 carrying a payment challenge, or
 * lower an output cap the caller did not set) and settled once when it ends: with its
 * actual usage on success or client abort, or released on failure. Services run every
 * billable call through meteredCall() or, for a stream whose end comes later, through the
 * Admission directly, passing what it says to the caller's reply (settlementHeaders).
 */
import type { Caller, Principal } from '../identity/caller.js';
import { isAppError, type AppError } from '../shared/errors.js';
import type { UsageRecord } from './usage.types.js';
import { requireModelAllowed } from '../identity/model-access.js';

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
  /**
   * The caller set `maxOutputTokens` itself. When it did not, a meter may grant a lower
   * cap (Admission.outputCap) instead of refusing a call the balance can pay for.
   */
  outputCapExplicit?: boolean;
  /** A fixed worst-case cost instead of the token estimate (e.g. audio, priced per second). */
  estimateMicros?: number;
  /** The coding agent's session the call belongs to (its usage record names it). */
  sessionId?: string;
  /** The name the call asked for `model` by, when it differs (an alias, another case): a key's model list must allow both. */
  askedAs?: string;
  /** The call's tags (its usage record names them). */
  tags?: readonly string[];
  /** The end user the client named (its usage record names it). */
  endUser?: string;
}

export interface SettledUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those read from the engine's prompt cache (billed at the cached-input price). */
  cachedInputTokens?: number;
  /** Of inputTokens, those written to the engine's prompt cache (billed at the cache-write price). */
  cacheWriteTokens?: number;
  /** HTTP status recorded with the usage (200, or 499 for an abandoned stream). */
  status: number;
  /** Overrides the model's token price (e.g. audio billed per second). */
  costMicros?: number;
  /** The model that served, when a fallback did: the record names it and it is billed at its price. */
  model?: string;
  /** The upstream deployment that served (its operator-facing id). */
  deployment?: string;
}

/** What settling a call produced: its usage record, and headers for the caller's reply. */
export interface Settlement {
  record: UsageRecord | null;
  headers: Readonly<Record<string, string>> | null;
}

export interface Admission {
  /** A lower output cap than the call asked for, which the call must run with; absent otherwise. */
  readonly outputCap?: number;
  /** Headers for the caller's reply known at admission (e.g. that the cap was lowered). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The credit held for the call, when the meter holds any (micro-dollars). */
  readonly holdMicros?: number;
  /**
   * Replaces the admission's hold with the actual cost. Once. Resolves with the usage
   * record, when the meter keeps one, and any headers for the reply.
   */
  settle(usage: SettledUsage): Promise<Settlement>;
  /** Ends the admission without charge (the call failed). Idempotent; no-op after settle. */
  release(): void;
}

export interface Meter {
  /** Throws (or rejects with) an AppError when the call may not run. */
  admit(principal: Principal, call: MeteredCall): Admission | Promise<Admission>;
}

/**
 * The cause of a refusal that lasts only a while: while the payer's other calls are in
 * flight (the call fits the payer's balance, not what those calls hold), or until the
 * minute of a key's tokens per minute ends (key-token-rates.ts). A caller that can wait
 * awaits `released()` (a hold given back, or the timeout) and tries again; `timedOut`
 * is the refusal to give when it waited as long as it may.
 */
export class HeldByOtherCalls {
  constructor(
    readonly released: (timeoutMs: number, signal?: AbortSignal) => Promise<void>,
    readonly timedOut?: (waitedMs: number) => AppError,
  ) {}
}

/**
 * Runs `attempt` (an admission) until it succeeds; while it is refused only because the
 * payer's other calls hold credit, waits for one of them to give some back and tries
 * again, for `waitMs` in all. Then the refusal says how long it waited.
 */
export async function waitingForHeldCredit<T>(attempt: () => Promise<T>, waitMs: number): Promise<T> {
  const started = performance.now();
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      const held = heldByOtherCalls(err);
      if (!held) throw err;
      const waited = performance.now() - started;
      if (waited >= waitMs) throw held.timedOut?.(waitMs) ?? err;
      await held.released(waitMs - waited);
    }
  }
}

/** The HeldByOtherCalls behind a refusal, or null when waiting would not help. */
export function heldByOtherCalls(err: unknown): HeldByOtherCalls | null {
  return isAppError(err) && err.cause instanceof HeldByOtherCalls ? err.cause : null;
}

/** Passes headers to the caller's reply, when anyone listens and there are any. */
export function toReply(caller: Caller, headers: Readonly<Record<string, string>> | null | undefined): void {
  if (headers && caller.reply) caller.reply.set(headers);
}

/** Admits a call through the caller's meter and passes the admission's headers on. */
export async function admitCall(caller: Caller, call: MeteredCall): Promise<Admission> {
  // The one place every billable call meets its caller: a model the key may not reach does not exist for it.
  requireModelAllowed(caller.principal.policy, call.model, call.askedAs);
  const { story } = caller;
  const started = story ? performance.now() : 0;
  const admission = await caller.meter.admit(caller.principal, call);
  // The admission's time is the call's wait for credit (a hold waits while other calls hold what it needs).
  story?.admitted(admission.holdMicros ?? null, performance.now() - started);
  toReply(caller, admission.headers);
  return admission;
}

/** Settles an admission and passes the settlement's headers on. */
export async function settleCall(caller: Caller, admission: Admission, usage: SettledUsage): Promise<Settlement> {
  const settlement = await admission.settle(usage);
  caller.story?.settled(settlement.record);
  toReply(caller, settlement.headers);
  return settlement;
}

/**
 * Admits `call`, runs `work` (with the admission, whose outputCap it must honour),
 * settles with the usage it reports, or releases the admission when `work` fails.
 * Returns what `work` returned.
 */
export async function meteredCall<T>(
  caller: Caller,
  call: MeteredCall,
  work: (admission: Admission) => Promise<{ value: T; usage: SettledUsage }>,
): Promise<T> {
  return runAdmitted(caller, await admitCall(caller, call), work);
}

/** The second half of meteredCall, for a call admitted some other way: runs `work`, then settles or releases. */
export async function runAdmitted<T>(
  caller: Caller,
  admission: Admission,
  work: (admission: Admission) => Promise<{ value: T; usage: SettledUsage }>,
): Promise<T> {
  let outcome: { value: T; usage: SettledUsage };
  try {
    outcome = await work(admission);
  } catch (err) {
    admission.release();
    throw err;
  }
  await settleCall(caller, admission, outcome.usage);
  return outcome.value;
}

/**
 * An API key's tokens per minute (`tpm`): counted on settled usage, checked on the
 * estimate. Each settled call counts its actual tokens (input and output) in the UTC
 * minute it settles in; before a call, its estimate (the input estimate the credit hold
 * uses, plus its output cap) must fit in what the key has left of the minute. A call that
 * set no output cap is lowered as credit lowers it (credit-fit.ts, with a token counted
 * as one): to the output allowance, else to what the minute has left (at least the
 * minimum cap beside tokens already used; a single token in a fresh minute). Calls in
 * flight are not held: concurrent calls admitted on the same remainder may together use
 * more than it, as their settled tokens show in the next checks.
 *
 * A call that does not fit is refused `429 rate_limit_exceeded`, with `retry-after` (the
 * seconds until the minute ends) and the limit and remainder in `x-ratelimit-*-tokens`.
 * Its cause is a HeldByOtherCalls that waits for the minute to end, so a batch line
 * waits for it rather than failing. A call that does not fit even in a whole minute is
 * refused at once, finally (`x-should-retry: false`).
 */
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { onAbort } from '../shared/abort.js';
import { CreditFit, type CapPolicy, type Fit } from './credit-fit.js';
import { wantedFrom, type LowerAgainst } from './credit-meter.js';
import { HeldByOtherCalls, type MeteredCall, type SettledUsage } from './meter.js';
import type { TokenWindows } from './token-windows.port.js';

export const MINUTE_MS = 60_000;
export const TOKEN_LIMIT_HEADER = 'x-ratelimit-limit-tokens';
export const TOKENS_REMAINING_HEADER = 'x-ratelimit-remaining-tokens';

/** What a call admitted under its key's tpm runs with: a lowered output cap, if any, and the headers for its reply. */
export interface TokenGrant {
  outputCap?: number;
  headers: Readonly<Record<string, string>>;
}

/** A token counts as one: the fit's "price" is the tokens themselves. */
const tokensOf = (inputTokens: number, outputTokens: number) => inputTokens + outputTokens;

/** The call as tokens: a call with a fixed cost estimate (audio) cannot have its cap lowered. */
function tokenCallOf(call: MeteredCall): MeteredCall {
  if (call.estimateMicros === undefined) return call;
  const { estimateMicros: _priced, ...tokens } = call;
  return { ...tokens, outputCapExplicit: true };
}

/** The minute (UTC) that holds at `nowMs`: where it starts, and the seconds until it ends (at least 1). */
function minuteOf(nowMs: number): { startMs: number; secondsLeft: number } {
  const startMs = nowMs - (nowMs % MINUTE_MS);
  return { startMs, secondsLeft: Math.max(1, Math.ceil((startMs + MINUTE_MS - nowMs) / 1000)) };
}

export class KeyTokenRates {
  constructor(
    private readonly windows: TokenWindows,
    private readonly clock: Clock,
    private readonly policy: CapPolicy,
  ) {}

  /**
   * Admits `call` (as estimated) under the key's `tpm`, or throws the refusal. `free`: an
   * interactive call's cap is lowered to what the minute has left; `balance`: a batch
   * line's cap is lowered against the whole limit only, and the line waits for room.
   */
  async admit(keyId: string, tpm: number, call: MeteredCall, lowerAgainst: LowerAgainst): Promise<TokenGrant> {
    const nowMs = this.clock.nowMs();
    const minute = minuteOf(nowMs);
    const used = await this.windows.used(keyId, minute.startMs);
    const left = Math.max(0, tpm - used);
    const headers = { [TOKEN_LIMIT_HEADER]: String(tpm), [TOKENS_REMAINING_HEADER]: String(left) };
    const fit = new CreditFit(tokenCallOf(call), tokensOf, this.policy);
    const whole = fit.within(tpm, 1);
    if (whole === null) throw tooLarge(fit, tpm, headers);
    const wanted: Fit | null = lowerAgainst === 'balance' ? (whole.micros <= left ? whole : null) : wantedFrom(fit, tpm, left, 'free');
    if (wanted) return wanted.outputCap === undefined ? { headers } : { outputCap: wanted.outputCap, headers };
    const least = lowerAgainst === 'balance' ? whole.micros : fit.lowerable ? call.inputTokens + fit.minimumCap : fit.worstCase;
    const releasedAtMs = minute.startMs + MINUTE_MS;
    const cause = new HeldByOtherCalls((timeoutMs, signal) => pause(Math.min(timeoutMs, Math.max(0, releasedAtMs - this.clock.nowMs())), signal));
    throw minuteSpent(fit, { tpm, left, least, secondsLeft: minute.secondsLeft, headers, cause });
  }

  /** Counts a settled call's tokens in the minute that holds now. */
  async counted(keyId: string, usage: SettledUsage): Promise<void> {
    const tokens = usage.inputTokens + usage.outputTokens;
    if (tokens > 0) await this.windows.add(keyId, minuteOf(this.clock.nowMs()).startMs, tokens);
  }
}

/** What the call needs, in words: its whole estimate when its cap is fixed, else at least `least`. */
function needs(fit: CreditFit, least: number): string {
  return fit.lowerable ? `at least ${least} tokens` : `up to ${fit.worstCase} tokens`;
}

function minuteSpent(
  fit: CreditFit,
  refusal: { tpm: number; left: number; least: number; secondsLeft: number; headers: Record<string, string>; cause: HeldByOtherCalls },
): AppError {
  const { tpm, left, least, secondsLeft, headers, cause } = refusal;
  return new AppError(
    'rate_limit',
    `Rate limit exceeded: this API key's limit of ${tpm} tokens per minute has ${left} left this minute, ` +
      `and this request needs ${needs(fit, least)}; retry in ${secondsLeft} s.`,
    { code: 'rate_limit_exceeded', retryAfterSeconds: secondsLeft, challenge: { headers }, cause },
  );
}

/** The refusal of a call that does not fit even in a whole minute: retrying cannot help. */
function tooLarge(fit: CreditFit, tpm: number, headers: Record<string, string>): AppError {
  const least = fit.lowerable ? fit.leastMicros : fit.worstCase;
  return new AppError(
    'rate_limit',
    `Request too large: this request needs ${needs(fit, least)}, more than this API key's limit of ${tpm} tokens per minute.`,
    { code: 'rate_limit_exceeded', challenge: { headers: { ...headers, 'x-should-retry': 'false' } } },
  );
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopListening = () => {};
    const timer = setTimeout(() => {
      stopListening();
      resolve();
    }, ms);
    if (!signal) return;
    stopListening = onAbort(signal, (reason) => {
      clearTimeout(timer);
      reject(reason instanceof Error ? reason : new Error('aborted'));
    });
  });
}

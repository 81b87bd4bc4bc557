/**
 * What a call may hold out of a given amount of credit: its worst case when that fits;
 * else, for a call that set no output cap, the default output allowance when that fits,
 * else the largest output cap the credit pays for (not below a minimum); else nothing,
 * with a refusal that names the figures.
 */
import { AppError } from '../shared/errors.js';
import { microsToUsd } from '../shared/money.js';
import type { MeteredCall } from './meter.js';

export interface CapPolicy {
  /** Grant a call without an output cap of its own the cap the credit affords instead of refusing it. */
  lowerOutputCap: boolean;
  /**
   * The smallest cap a call is lowered to while the payer's other calls hold credit (its
   * own default cap, when that is smaller); below it the call waits for them. With
   * nothing else held, a call is lowered down to a single token rather than refused.
   */
  minOutputTokens: number;
  /**
   * The output a call without a cap of its own holds when its worst case does not fit:
   * a burst's calls then hold this much each, not the whole balance one after another.
   */
  defaultHoldTokens: number;
}

export const DEFAULT_CAP_POLICY: CapPolicy = { lowerOutputCap: true, minOutputTokens: 16, defaultHoldTokens: 1024 };

/** What a call holds: `micros`, and the lowered cap it must run with when it was lowered. */
export interface Fit {
  micros: number;
  outputCap?: number;
}

/** The cost, in micro-dollars, of a call of the model with this many input and output tokens. */
export type Pricing = (inputTokens: number, outputTokens: number) => number;

export class CreditFit {
  constructor(
    private readonly call: MeteredCall,
    private readonly price: Pricing,
    private readonly policy: CapPolicy,
  ) {}

  /** The call's worst-case cost: its fixed estimate, else its input and output cap at the model's prices. */
  get worstCase(): number {
    return this.call.estimateMicros ?? this.price(this.call.inputTokens, this.call.maxOutputTokens);
  }

  /** May this call's output cap be lowered (it set none, and is priced on tokens)? */
  get lowerable(): boolean {
    return this.policy.lowerOutputCap && this.call.outputCapExplicit !== true && this.call.estimateMicros === undefined;
  }

  /** The smallest cap the call is lowered to. */
  get minimumCap(): number {
    return Math.min(this.policy.minOutputTokens, this.call.maxOutputTokens);
  }

  /** The output allowance held by a call without a cap of its own whose worst case does not fit. */
  get allowance(): number {
    return Math.min(this.policy.defaultHoldTokens, this.call.maxOutputTokens);
  }

  /**
   * What the call holds out of `room` micro-dollars, or null when nothing it may run with
   * fits: the worst case, else the allowance, else the largest cap of at least `minimum`.
   */
  within(room: number, minimum = this.minimumCap): Fit | null {
    const worst = this.worstCase;
    if (worst <= room) return { micros: worst };
    if (!this.lowerable) return null;
    const { inputTokens } = this.call;
    const allowance = this.allowance;
    const allowanceMicros = this.price(inputTokens, allowance);
    if (allowanceMicros <= room) return { micros: allowanceMicros, outputCap: allowance };
    const cap = this.affordableCap(room);
    if (cap < Math.max(1, minimum)) return null;
    return { micros: this.price(inputTokens, cap), outputCap: cap };
  }

  /** Can `balance`, with nothing else held, pay for this call (its input and one output token, when its cap may be lowered)? */
  payableFrom(balance: number): boolean {
    return this.within(balance, 1) !== null;
  }

  /** The least the call can run for: its fixed estimate or explicit worst case, else its input and one output token. */
  get leastMicros(): number {
    return this.lowerable ? this.price(this.call.inputTokens, 1) : this.worstCase;
  }

  /** The largest output cap (up to the call's own) whose cost with the input fits in `room`; 0 when none does. */
  affordableCap(room: number): number {
    const { inputTokens, maxOutputTokens } = this.call;
    if (this.price(inputTokens, maxOutputTokens) <= room) return maxOutputTokens;
    if (this.price(inputTokens, 0) > room) return 0;
    // Cost grows with the cap: binary search keeps the exact rounding of the price function.
    let fits = 0;
    let over = maxOutputTokens;
    while (over - fits > 1) {
      const mid = Math.floor((fits + over) / 2);
      if (this.price(inputTokens, mid) <= room) fits = mid;
      else over = mid;
    }
    return fits;
  }

  /**
   * The refusal of a call the balance itself, with nothing held, cannot pay for: what the
   * call needs at least, and the balance. A call whose cap may not be lowered gets refusal().
   */
  shortOfBalance(balance: number): AppError {
    if (!this.lowerable) return this.refusal(balance);
    return quotaError(
      `Insufficient credit: this request needs at least ${usd(this.leastMicros)} (${this.call.inputTokens} input tokens at most and one output token), ` +
        `and the balance is ${usd(balance)}. Add credit.`,
    );
  }

  /**
   * The refusal of a call the balance pays for but whose credit the payer's other calls
   * held for all of `waitedMs`: what the call needs at least, the balance, and what was free.
   */
  heldTooLong(balance: number, free: number, waitedMs: number): AppError {
    const needs = this.lowerable
      ? `needs at least ${usd(this.leastMicros)} (${this.call.inputTokens} input tokens at most and one output token)`
      : `may cost up to ${usd(this.worstCase)}`;
    return quotaError(
      `Insufficient credit: this request ${needs}, and the balance is ${usd(balance)}, ` +
        `but calls in flight held all but ${usd(free)} of it for the ${waitedMs} ms this request waited. Retry later, or add credit.`,
    );
  }

  /** The refusal of a call that does not fit in `free`, naming the worst case, the free credit and the cap it affords. */
  refusal(free: number, cause?: unknown): AppError {
    const { call } = this;
    let message = `Insufficient credit: this request may cost up to ${usd(this.worstCase)}`;
    if (call.estimateMicros !== undefined) {
      message += `, and the free balance (the balance less the credit held by calls in flight) is ${usd(free)}.`;
    } else {
      const cap = this.affordableCap(free);
      message +=
        ` (${call.inputTokens} input tokens at most, an output cap of ${call.maxOutputTokens} tokens),` +
        ` and the free balance (the balance less the credit held by calls in flight) is ${usd(free)},` +
        ` which affords an output cap of at most ${cap} tokens`;
      message += this.lowerable ? `, fewer than the minimum of ${this.minimumCap}. Add credit.` : '. Lower the output cap, or add credit.';
    }
    return quotaError(message, cause);
  }
}

/** An amount of credit as the refusals write it; credit held beyond the balance reads as none. */
const usd = (micros: number) => `${microsToUsd(Math.max(0, micros)).toFixed(6)} USD`;

const quotaError = (message: string, cause?: unknown) => new AppError('insufficient_quota', message, { code: 'insufficient_quota', cause });

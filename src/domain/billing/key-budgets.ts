/**
 * Holds against an API key's budget, by the credit rule (credit-meter.ts) with the key's
 * budget in the current UTC window in place of the project's balance: a call holds its
 * worst-case cost against what the key has left (its limit less what it spent in the
 * window and what its other calls in flight hold), or, when it set no output cap, a
 * lowered cap's cost (credit-fit.ts); the hold is settled once with the call's actual
 * cost. A call the budget pays for but whose room other calls hold waits for them (up to
 * the hold wait); one the budget itself cannot pay for is refused at once with
 * `budget_exceeded`, naming the window, the limit and when it resets.
 */
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { microsToUsd } from '../shared/money.js';
import type { KeyBudget } from '../identity/key-policy.types.js';
import { CreditFit, type Fit } from './credit-fit.js';
import { wantedFrom, type HoldPolicy, type LowerAgainst } from './credit-meter.js';
import { HeldByOtherCalls, waitingForHeldCredit, type MeteredCall } from './meter.js';
import { resetTimeOf, windowSpan } from './budget-window.js';
import type { BudgetAccount, BudgetHold, BudgetLedger } from './budget-ledger.port.js';

/** The header of a budget refusal that says when the key's budget resets (ISO 8601, UTC). */
export const BUDGET_RESET_HEADER = 'x-sluice-budget-reset';

export const BUDGET_EXCEEDED = 'budget_exceeded';

/** A call's hold on its key's budget, and the lowered output cap it must run with, if any. */
export interface BudgetGrant {
  hold: BudgetHold;
  outputCap?: number;
}

export class KeyBudgets {
  constructor(
    private readonly ledger: BudgetLedger,
    private readonly price: (model: string, inputTokens: number, outputTokens: number) => number,
    private readonly clock: Clock,
    private readonly policy: HoldPolicy,
  ) {}

  /** The key's budget in the window that holds now. */
  accountOf(keyId: string, budget: KeyBudget): BudgetAccount {
    return { keyId, budget, span: windowSpan(budget.window, this.clock.nowMs()) };
  }

  /** Holds for an interactive call, waiting up to the policy's hold wait while the key's other calls hold its room. */
  admit(keyId: string, budget: KeyBudget, call: MeteredCall): Promise<BudgetGrant> {
    return waitingForHeldCredit(() => this.hold(keyId, budget, call, 'free'), this.policy.holdWaitMs);
  }

  /** Settles a grant with the call's committed cost. */
  settled(grant: BudgetGrant, keyId: string, budget: KeyBudget, costMicros: number): void {
    grant.hold.settled(costMicros, this.accountOf(keyId, budget));
  }

  /**
   * Holds the call's worst case, or a lowered cap's cost, against the key's budget; or
   * throws `budget_exceeded`, with a HeldByOtherCalls cause when the budget would pay
   * for the call with nothing else held.
   */
  async hold(keyId: string, budget: KeyBudget, call: MeteredCall, lowerAgainst: LowerAgainst): Promise<BudgetGrant> {
    const account = this.accountOf(keyId, budget);
    const fit = new CreditFit(call, (input, output) => this.price(call.model, input, output), this.policy);
    const view = await this.ledger.view(account);
    try {
      const left = budget.limitMicros - view.spent;
      if (left <= 0 || !fit.payableFrom(left)) throw budgetSpent(account, left, fit, this.clock.nowMs());
      const free = left - view.held;
      const wanted: Fit | null = wantedFrom(fit, left, free, lowerAgainst);
      const hold = wanted && (await view.tryHold(wanted.micros));
      if (hold && wanted) return wanted.outputCap === undefined ? { hold } : { hold, outputCap: wanted.outputCap };
      const cause = new HeldByOtherCalls(
        (timeoutMs, signal) => view.whenReleased(timeoutMs, signal),
        (waitedMs) => heldTooLong(account, free, waitedMs),
      );
      throw heldTooLong(account, free, 0, cause);
    } finally {
      view.close();
    }
  }
}

/** A budget as the refusals write it: `$1.00`, or as many decimals as it has (`$0.000125`). */
export function usdAmount(micros: number): string {
  const usd = microsToUsd(Math.max(0, micros));
  const cents = usd.toFixed(2);
  return Number(cents) === usd ? `$${cents}` : `$${usd.toFixed(6).replace(/0+$/, '')}`;
}

const resetClause = (account: BudgetAccount) => {
  const reset = resetTimeOf(account.span);
  return reset === null ? 'it does not reset' : `it resets at ${reset}`;
};

function budgetError(account: BudgetAccount, message: string, options: { cause?: unknown; retryAfterSeconds?: number; final: boolean }): AppError {
  const reset = resetTimeOf(account.span);
  const headers: Record<string, string> = reset === null ? {} : { [BUDGET_RESET_HEADER]: reset };
  // Retrying before the reset cannot help a spent budget (the OpenAI SDKs retry a 429 otherwise).
  if (options.final) headers['x-should-retry'] = 'false';
  return new AppError('rate_limit', message, {
    code: BUDGET_EXCEEDED,
    cause: options.cause,
    ...(options.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: options.retryAfterSeconds }),
    challenge: { headers },
  });
}

/** The refusal of a call the key's budget, with nothing else held, cannot pay for. */
function budgetSpent(account: BudgetAccount, left: number, fit: CreditFit, nowMs: number): AppError {
  const { budget } = account;
  const what = `This key's ${budget.window} budget of ${usdAmount(budget.limitMicros)}`;
  const message =
    left <= 0
      ? `${what} is spent; ${resetClause(account)}.`
      : `${what} has ${usdAmount(left)} left, less than this request needs (at least ${usdAmount(fit.leastMicros)}); ${resetClause(account)}.`;
  const { endMs } = account.span;
  const retryAfterSeconds = endMs === null ? undefined : Math.max(1, Math.ceil((endMs - nowMs) / 1000));
  return budgetError(account, message, { final: true, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
}

/** The refusal of a call the budget pays for but whose room the key's other calls held (for `waitedMs`). */
function heldTooLong(account: BudgetAccount, free: number, waitedMs: number, cause?: unknown): AppError {
  const { budget } = account;
  return budgetError(
    account,
    `This key's ${budget.window} budget of ${usdAmount(budget.limitMicros)} is held by its calls in flight ` +
      `(${usdAmount(free)} free) for the ${waitedMs} ms this request waited; retry when they end (${resetClause(account)}).`,
    { cause, final: false },
  );
}

/**
 * The meter of calls paid from project credit by keys that may carry a budget: a call of
 * a key with a budget must be admitted by both, its key's budget (key-budgets.ts) and its
 * project's credit (credit-meter.ts), and a refusal by either gives back what the other
 * held. The budget is held first; a cap it lowers is the cap the credit holds for (and
 * may lower further). Settling commits the cost once (the credit's usage record) and
 * then counts it against the budget. A key without a budget takes no extra step.
 */
import type { Principal } from '../identity/caller.js';
import type { KeyBudget } from '../identity/key-policy.types.js';
import type { OutboxMessage } from '../outbox/outbox.types.js';
import type { UsageRecord } from './usage.types.js';
import { capHeaders, type CollectingMeter, type CreditMeter } from './credit-meter.js';
import type { KeyBudgets, BudgetGrant } from './key-budgets.js';
import type { LineMeter } from './meter-resolver.js';
import type { Admission, Meter, MeteredCall, SettledUsage, Settlement } from './meter.js';

/** The key and budget of a call whose key carries one; null otherwise. */
function budgetOf(principal: Principal): { keyId: string; budget: KeyBudget } | null {
  const budget = principal.policy?.budget;
  return budget && principal.keyId !== null ? { keyId: principal.keyId, budget } : null;
}

/** The call the credit holds for: with the cap the budget lowered it to, still lowerable. */
function withinBudget(call: MeteredCall, grant: BudgetGrant): MeteredCall {
  return grant.outputCap === undefined ? call : { ...call, maxOutputTokens: grant.outputCap };
}

/**
 * An admission by both: its cap the smaller, its headers the credit's (which name the
 * final cap). Settling marks the budget hold as settling while the credit commits the
 * cost, then counts the cost (`counted`: at once, or when a batch line's records are written).
 */
function bothAdmitted(credit: Admission, grant: BudgetGrant, counted: (cost: number) => void): Admission {
  const outputCap = credit.outputCap ?? grant.outputCap;
  return {
    ...(outputCap === undefined ? {} : { outputCap, headers: credit.headers ?? capHeaders(outputCap) }),
    async settle(usage: SettledUsage): Promise<Settlement> {
      grant.hold.settling();
      let settlement: Settlement;
      try {
        settlement = await credit.settle(usage);
      } catch (err) {
        grant.hold.release();
        throw err;
      }
      counted(settlement.record?.costMicros ?? 0);
      return settlement;
    },
    release() {
      credit.release();
      grant.hold.release();
    },
  };
}

export class KeyBudgetMeter implements Meter {
  constructor(
    private readonly credit: CreditMeter,
    private readonly budgets: KeyBudgets,
  ) {}

  admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const keyed = budgetOf(principal);
    if (!keyed) return this.credit.admit(principal, call);
    return this.#admitBoth(principal, call, keyed.keyId, keyed.budget);
  }

  async #admitBoth(principal: Principal, call: MeteredCall, keyId: string, budget: KeyBudget): Promise<Admission> {
    const grant = await this.budgets.admit(keyId, budget, call);
    let credit: Admission;
    try {
      credit = await this.credit.admit(principal, withinBudget(call, grant));
    } catch (err) {
      grant.hold.release();
      throw err;
    }
    return bothAdmitted(credit, grant, (cost) => this.budgets.settled(grant, keyId, budget, cost));
  }

  /** A meter for one batch line: see BudgetCollectingMeter. */
  collecting(): LineMeter {
    return new BudgetCollectingMeter(this.credit.collecting(), this.budgets);
  }
}

/**
 * The meter of one batch line whose key may carry a budget: the credit's collecting
 * meter (the line's records are written with its result), with the budget of the key
 * that created the batch (its policy as it is now, on the line's principal) held as the
 * credit is (a cap lowered against the budget alone), and settled with the records' cost
 * once they are written (finish()).
 */
class BudgetCollectingMeter implements LineMeter {
  readonly #settles: Array<() => void> = [];

  constructor(
    private readonly credit: CollectingMeter,
    private readonly budgets: KeyBudgets,
  ) {}

  get records(): readonly UsageRecord[] {
    return this.credit.records;
  }

  get outbox(): readonly OutboxMessage[] {
    return this.credit.outbox;
  }

  async admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const keyed = budgetOf(principal);
    if (!keyed) return this.credit.admit(principal, call);
    const { keyId, budget } = keyed;
    const grant = await this.budgets.hold(keyId, budget, call, 'balance');
    let credit: Admission;
    try {
      credit = await this.credit.admit(principal, withinBudget(call, grant));
    } catch (err) {
      grant.hold.release();
      throw err;
    }
    return bothAdmitted(credit, grant, (cost) => this.#settles.push(() => this.budgets.settled(grant, keyId, budget, cost)));
  }

  finish(): void {
    for (const settle of this.#settles.splice(0)) settle();
    this.credit.finish();
  }
}

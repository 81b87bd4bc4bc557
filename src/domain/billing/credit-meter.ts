/**
 * The meter of calls paid from a project's prepaid credit (API keys and batch lines).
 *
 * The credit rule: a call is admitted only if its worst-case cost (input tokens at the
 * input price plus its output cap at the output price) fits in the project's balance
 * less the credit held by its other calls in flight; the hold lasts until the call ends,
 * when the actual cost is debited in the same step that releases it (first the debit is
 * committed, then the hold released, so no admission ever sees neither). A burst of
 * concurrent calls therefore cannot overdraw; the balance goes below zero only where a
 * call's actual cost exceeded its estimate.
 */
import { insufficientQuota, AppError } from '../shared/errors.js';
import type { Principal } from '../access/caller.js';
import type { BillingService } from './billing.service.js';
import type { Admission, Meter, MeteredCall, SettledUsage, Settlement } from './meter.js';
import type { Hold, ReservationBook } from './reservations.js';
import type { UsageRecord } from './usage.types.js';

function payingProject(principal: Principal): string {
  if (principal.payer.kind !== 'project') {
    throw new AppError('internal', `the credit meter cannot charge a ${principal.payer.kind}`);
  }
  return principal.payer.projectId;
}

export class CreditMeter implements Meter {
  constructor(
    private readonly billing: BillingService,
    private readonly reservations: ReservationBook,
  ) {}

  admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    return this.hold(principal, call).then((hold) => new CreditAdmission(this.billing, principal, call, hold));
  }

  /** Holds the call's worst-case cost, or throws `insufficient_quota`. */
  async hold(principal: Principal, call: MeteredCall): Promise<Hold> {
    const projectId = payingProject(principal);
    const estimate = call.estimateMicros ?? this.billing.costOf(call.model, call.inputTokens, call.maxOutputTokens);
    const epoch = this.reservations.beginRead();
    try {
      const balance = await this.billing.balanceOf(projectId);
      const hold = balance === undefined ? null : this.reservations.tryHold(projectId, balance, estimate, epoch);
      if (!hold) throw insufficientQuota();
      return hold;
    } finally {
      this.reservations.endRead(epoch);
    }
  }

  /** A meter for one batch line: see CollectingMeter. */
  collecting(): CollectingMeter {
    return new CollectingMeter(this, this.billing);
  }
}

class CreditAdmission implements Admission {
  #done = false;

  constructor(
    private readonly billing: BillingService,
    private readonly principal: Principal,
    private readonly call: MeteredCall,
    private readonly hold: Hold,
  ) {}

  async settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) throw new AppError('internal', 'a metered call was settled twice');
    this.#done = true;
    const record = this.billing.usageRecord(this.principal, this.call, usage);
    try {
      await this.billing.write(record);
    } catch (err) {
      this.hold.release();
      throw err;
    }
    this.hold.settled();
    return { record, headers: null };
  }

  release(): void {
    this.#done = true;
    this.hold.release();
  }
}

/**
 * The meter of one batch line. Admission holds credit as for any call, but settling only
 * collects the usage record: the batch runner writes it in the transaction that records
 * the line's result (so a line is billed exactly when its result is recorded), then calls
 * finish(), which releases the holds.
 */
export class CollectingMeter implements Meter {
  readonly records: UsageRecord[] = [];
  readonly #holds: Hold[] = [];

  constructor(
    private readonly credit: CreditMeter,
    private readonly billing: BillingService,
  ) {}

  async admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const hold = await this.credit.hold(principal, call);
    this.#holds.push(hold);
    return {
      settle: async (usage) => {
        const record = this.billing.usageRecord(principal, call, usage);
        this.records.push(record);
        return { record, headers: null };
      },
      release: () => hold.release(),
    };
  }

  /** The collected records were written (or will never be): give the held credit back. */
  finish(): void {
    for (const hold of this.#holds.splice(0)) hold.settled();
  }
}

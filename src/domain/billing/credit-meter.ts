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
 *
 * Holds never refuse work the credit pays for (credit-fit.ts): a call that set no output
 * cap and whose worst case does not fit runs with the largest cap the free credit affords
 * (Admission.outputCap, announced in the OUTPUT_CAP_HEADER). A refusal that only lasts
 * while the payer's other calls hold credit carries a HeldByOtherCalls cause, so a caller
 * that can wait (a batch line) waits for them instead of failing.
 */
import { insufficientQuota, AppError } from '../shared/errors.js';
import type { Principal } from '../identity/caller.js';
import type { BillingService } from './billing.service.js';
import { HeldByOtherCalls, type Admission, type Meter, type MeteredCall, type SettledUsage, type Settlement } from './meter.js';
import type { Hold, ReservationBook } from './reservations.js';
import type { UsageRecord } from './usage.types.js';
import { CreditFit, DEFAULT_CAP_POLICY, type CapPolicy } from './credit-fit.js';
import type { LineMeter } from './meter-resolver.js';
import type { OutboxMessage } from '../outbox/outbox.types.js';

/** The header that tells a client its call runs with a lower output cap than the model's default: the cap, in tokens. */
export const OUTPUT_CAP_HEADER = 'x-sluice-output-cap-lowered';

/** A call's hold, and the lowered output cap it must run with, if any. */
export interface CreditGrant {
  hold: Hold;
  outputCap?: number;
}

/**
 * What a call that set no output cap is lowered against: `free` (the balance less the
 * other calls' holds: an interactive call is served now, with what is left) or `balance`
 * (the balance alone: a batch line's cap does not depend on which lines run beside it; it
 * waits for their holds instead).
 */
export type LowerAgainst = 'free' | 'balance';

/**
 * A programming guard, not a refusal a client can meet: scopes mount this meter only
 * with strategies whose callers their project pays for, and the MeterResolver gives it
 * only batches paid by their project.
 */
function payingProject(principal: Principal): string {
  if (principal.payer.kind !== 'project') {
    throw new AppError('internal', `the credit meter charges project payers only, and was given a payer of kind "${principal.payer.kind}"`);
  }
  return principal.payer.projectId;
}

export class CreditMeter implements Meter {
  constructor(
    private readonly billing: BillingService,
    private readonly reservations: ReservationBook,
    private readonly policy: CapPolicy = DEFAULT_CAP_POLICY,
  ) {}

  admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    return this.hold(principal, call, 'free').then((grant) => new CreditAdmission(this.billing, principal, call, grant));
  }

  /**
   * Holds the call's worst case, or a lowered cap's cost (see LowerAgainst), or throws
   * `insufficient_quota` naming the figures.
   */
  async hold(principal: Principal, call: MeteredCall, lowerAgainst: LowerAgainst): Promise<CreditGrant> {
    const projectId = payingProject(principal);
    const fit = new CreditFit(call, (input, output) => this.billing.costOf(call.model, input, output), this.policy);
    const epoch = this.reservations.beginRead();
    try {
      const balance = await this.billing.balanceOf(projectId);
      // No credit at all: the plain quota refusal (the figures would say nothing more).
      if (balance === undefined || balance <= 0) throw insufficientQuota();
      const free = this.reservations.freeOf(projectId, balance, epoch);
      const wanted = fit.within(lowerAgainst === 'free' ? free : balance);
      const hold = wanted && this.reservations.tryHold(projectId, balance, wanted.micros, epoch);
      if (hold) return wanted.outputCap === undefined ? { hold } : { hold, outputCap: wanted.outputCap };
      // It would fit with nothing else in flight: the refusal lasts only while other calls hold credit.
      const since = this.reservations.releasesOf(projectId);
      const waitable = fit.within(balance) !== null;
      const cause = waitable
        ? new HeldByOtherCalls((timeoutMs, signal) => this.reservations.whenReleased(projectId, since, timeoutMs, signal))
        : undefined;
      throw fit.refusal(free, cause);
    } finally {
      this.reservations.endRead(epoch);
    }
  }

  /** A meter for one batch line: see CollectingMeter. */
  collecting(): CollectingMeter {
    return new CollectingMeter(this, this.billing);
  }
}

/** The headers that announce a lowered cap, or none. */
export function capHeaders(outputCap: number | undefined): Readonly<Record<string, string>> | undefined {
  return outputCap === undefined ? undefined : { [OUTPUT_CAP_HEADER]: String(outputCap) };
}

class CreditAdmission implements Admission {
  #done = false;
  readonly #hold: Hold;
  readonly outputCap?: number;
  readonly headers?: Readonly<Record<string, string>>;

  constructor(
    private readonly billing: BillingService,
    private readonly principal: Principal,
    private readonly call: MeteredCall,
    grant: CreditGrant,
  ) {
    this.#hold = grant.hold;
    if (grant.outputCap !== undefined) {
      this.outputCap = grant.outputCap;
      this.headers = capHeaders(grant.outputCap);
    }
  }

  async settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) throw new AppError('internal', 'a metered call was settled twice');
    this.#done = true;
    const record = this.billing.usageRecord(this.principal, this.call, usage);
    try {
      await this.billing.write(record);
    } catch (err) {
      this.#hold.release();
      throw err;
    }
    this.#hold.settled();
    return { record, headers: null };
  }

  release(): void {
    this.#done = true;
    this.#hold.release();
  }
}

/**
 * The meter of one batch line. Admission holds credit as for any call (a cap lowered
 * against the balance alone; see LowerAgainst), but settling only
 * collects the usage record: the batch runner writes it in the transaction that records
 * the line's result (so a line is billed exactly when its result is recorded), then calls
 * finish(), which releases the holds.
 */
export class CollectingMeter implements LineMeter {
  readonly records: UsageRecord[] = [];
  /** Project credit reports to nobody. */
  readonly outbox: readonly OutboxMessage[] = [];
  readonly #holds: Hold[] = [];

  constructor(
    private readonly credit: CreditMeter,
    private readonly billing: BillingService,
  ) {}

  async admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const { hold, outputCap } = await this.credit.hold(principal, call, 'balance');
    this.#holds.push(hold);
    return {
      ...(outputCap === undefined ? {} : { outputCap, headers: capHeaders(outputCap) }),
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

/**
 * The meter of calls paid from a project's prepaid credit (API keys and batch lines).
 *
 * The credit rule: a call is admitted only if what it holds fits in the project's balance
 * less the credit held by its other calls in flight: its worst-case cost (input tokens at
 * the input price plus its output cap at the output price), or, for a call that set no
 * output cap and whose worst case does not fit, a default output allowance or a lower cap
 * (credit-fit.ts), which the call then runs with (Admission.outputCap, announced in the
 * OUTPUT_CAP_HEADER). The hold lasts until the call ends, when the actual cost is debited
 * in the same step that releases it (first the debit is committed, then the hold
 * released, so no admission ever sees neither). A burst of concurrent calls therefore
 * cannot overdraw; the balance goes below zero only where a call's actual cost exceeded
 * its estimate.
 *
 * Holds never refuse work the credit pays for: a call the balance pays for but whose
 * credit the payer's other calls hold waits for them to give some back (up to
 * `holdWaitMs`) instead of failing. It is refused at once only when the balance itself,
 * with nothing held, cannot pay for it (its input and one output token, when its cap may
 * be lowered). Such a refusal carries a HeldByOtherCalls cause while it lasts, so a batch
 * line, which waits on its own terms, can wait too.
 */
import { insufficientQuota, AppError } from '../shared/errors.js';
import type { Principal } from '../identity/caller.js';
import type { BillingService } from './billing.service.js';
import { HeldByOtherCalls, waitingForHeldCredit, type Admission, type Meter, type MeteredCall, type SettledUsage, type Settlement } from './meter.js';
import type { Hold, ReservationBook } from './reservations.js';
import type { UsageRecord } from './usage.types.js';
import { CreditFit, DEFAULT_CAP_POLICY, type CapPolicy, type Fit } from './credit-fit.js';
import type { LineMeter } from './meter-resolver.js';
import type { OutboxMessage } from '../outbox/outbox.types.js';
import { InputOverheads } from './input-overhead.js';

/** The header that tells a client its call runs with a lower output cap than the model's default: the cap, in tokens. */
export const OUTPUT_CAP_HEADER = 'x-sluice-output-cap-lowered';

/** A call's hold, and the lowered output cap it must run with, if any. */
export interface CreditGrant {
  hold: Hold;
  outputCap?: number;
}

/**
 * What a call that set no output cap is lowered against: `free` (the balance less the
 * other calls' holds: an interactive call is served with what is left, or waits for them
 * when that is less than the minimum cap) or `balance` (the balance alone: a batch line's
 * cap does not depend on which lines run beside it; it waits for their holds instead).
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

/** How a meter holds credit: how it lowers caps (CapPolicy), and how long a call waits for credit other calls hold. */
export interface HoldPolicy extends CapPolicy {
  holdWaitMs: number;
}

export const DEFAULT_HOLD_POLICY: HoldPolicy = { ...DEFAULT_CAP_POLICY, holdWaitMs: 2_000 };

/**
 * What `fit` holds out of `balance`, of which `free` is not held by other calls: see
 * LowerAgainst. Beside other calls' holds a lowered cap is at least the policy's minimum
 * (below it the call waits for them); with nothing else held, or against the balance
 * alone, a single token is enough.
 */
export function wantedFrom(fit: CreditFit, balance: number, free: number, lowerAgainst: LowerAgainst): Fit | null {
  if (lowerAgainst === 'balance') return fit.within(balance, 1);
  return fit.within(free, free >= balance ? 1 : fit.minimumCap);
}

export class CreditMeter implements Meter {
  /** What upstreams count past the input estimates, per model: added to later estimates. */
  readonly overheads = new InputOverheads();

  constructor(
    private readonly billing: BillingService,
    private readonly reservations: ReservationBook,
    private readonly policy: HoldPolicy = DEFAULT_HOLD_POLICY,
  ) {}

  /** Holds credit for the call, waiting up to the policy's holdWaitMs while other calls hold what it needs. */
  async admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    const estimated = this.overheads.estimateOf(call);
    const grant = await waitingForHeldCredit(() => this.hold(principal, estimated, 'free'), this.policy.holdWaitMs);
    return new CreditAdmission(this.billing, this.overheads, principal, estimated, grant);
  }

  /**
   * Holds the call's worst case, or a lowered cap's cost (see LowerAgainst), or throws
   * `insufficient_quota` naming the figures, with a HeldByOtherCalls cause when the
   * balance would pay for the call with nothing else held.
   */
  async hold(principal: Principal, call: MeteredCall, lowerAgainst: LowerAgainst): Promise<CreditGrant> {
    const projectId = payingProject(principal);
    const fit = new CreditFit(call, (input, output) => this.billing.costOf(call.model, input, output), this.policy);
    const epoch = this.reservations.beginRead();
    try {
      const balance = await this.billing.balanceOf(projectId);
      // No credit at all: the plain quota refusal (the figures would say nothing more).
      if (balance === undefined || balance <= 0) throw insufficientQuota();
      // Waiting for other calls would not help: even the whole balance does not pay for this call.
      if (!fit.payableFrom(balance)) throw fit.shortOfBalance(balance);
      const free = this.reservations.freeOf(projectId, balance, epoch);
      const wanted = wantedFrom(fit, balance, free, lowerAgainst);
      const hold = wanted && this.reservations.tryHold(projectId, balance, wanted.micros, epoch);
      if (hold) return wanted.outputCap === undefined ? { hold } : { hold, outputCap: wanted.outputCap };
      const since = this.reservations.releasesOf(projectId);
      const cause = new HeldByOtherCalls(
        (timeoutMs, signal) => this.reservations.whenReleased(projectId, since, timeoutMs, signal),
        (waitedMs) => fit.heldTooLong(balance, free, waitedMs),
      );
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
  readonly holdMicros: number;

  constructor(
    private readonly billing: BillingService,
    private readonly overheads: InputOverheads,
    private readonly principal: Principal,
    private readonly call: MeteredCall,
    grant: CreditGrant,
  ) {
    this.#hold = grant.hold;
    this.holdMicros = grant.hold.micros;
    if (grant.outputCap !== undefined) {
      this.outputCap = grant.outputCap;
      this.headers = capHeaders(grant.outputCap);
    }
  }

  async settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) throw new AppError('internal', 'a metered call was settled twice');
    this.#done = true;
    this.overheads.observe(this.call, usage);
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

  async admit(principal: Principal, original: MeteredCall): Promise<Admission> {
    const call = this.credit.overheads.estimateOf(original);
    const { hold, outputCap } = await this.credit.hold(principal, call, 'balance');
    this.#holds.push(hold);
    return {
      ...(outputCap === undefined ? {} : { outputCap, headers: capHeaders(outputCap) }),
      settle: async (usage) => {
        this.credit.overheads.observe(call, usage);
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

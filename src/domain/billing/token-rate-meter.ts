/**
 * The meter of calls by API keys that may carry a `tpm`: a call of such a key is first
 * admitted under its tokens per minute (key-token-rates.ts), then by the meter behind
 * (the key's budget and its project's credit: key-budget-meter.ts), with the cap the
 * minute lowered it to, which that meter may lower further. Settling counts the call's
 * tokens in the key's minute and settles it behind. A key without a tpm takes no extra step.
 */
import type { Principal } from '../identity/caller.js';
import { capHeaders, type LowerAgainst } from './credit-meter.js';
import type { KeyTokenRates, TokenGrant } from './key-token-rates.js';
import type { LineMeter } from './meter-resolver.js';
import type { Admission, Meter, MeteredCall, SettledUsage } from './meter.js';

/** A meter of API-key calls, with a meter for each batch line. */
export interface KeyMeter extends Meter {
  admit(principal: Principal, call: MeteredCall): Promise<Admission>;
  collecting(): LineMeter;
}

/** The key and tpm of a call whose key carries one; null otherwise. */
function tpmOf(principal: Principal): { keyId: string; tpm: number } | null {
  const tpm = principal.policy?.tpm;
  return tpm !== undefined && principal.keyId !== null ? { keyId: principal.keyId, tpm } : null;
}

interface Limited {
  rates: KeyTokenRates;
  /** The call as the credit estimates it (its input estimate with what upstreams were seen to add). */
  estimate: (call: MeteredCall) => MeteredCall;
}

/** Admits `call` under its key's tpm, then by `behind` with the cap the minute allows. */
async function admitUnderTpm(behind: Meter, limited: Limited, principal: Principal, call: MeteredCall, lowerAgainst: LowerAgainst): Promise<Admission> {
  const keyed = tpmOf(principal);
  if (!keyed) return behind.admit(principal, call);
  const grant = await limited.rates.admit(keyed.keyId, keyed.tpm, limited.estimate(call), lowerAgainst);
  const admission = await behind.admit(principal, grant.outputCap === undefined ? call : { ...call, maxOutputTokens: grant.outputCap });
  return counting(admission, grant, (usage) => limited.rates.counted(keyed.keyId, usage));
}

/** The admission behind, with the smaller cap and the token headers; settling counts the tokens first. */
function counting(behind: Admission, grant: TokenGrant, count: (usage: SettledUsage) => Promise<void>): Admission {
  const outputCap = behind.outputCap ?? grant.outputCap;
  return {
    ...(outputCap === undefined ? {} : { outputCap }),
    ...(behind.holdMicros === undefined ? {} : { holdMicros: behind.holdMicros }),
    headers: { ...grant.headers, ...(behind.headers ?? capHeaders(outputCap)) },
    async settle(usage) {
      // The tokens were spent upstream whatever becomes of the settlement.
      await count(usage);
      return behind.settle(usage);
    },
    release: () => behind.release(),
  };
}

export class TokenRateMeter implements KeyMeter {
  readonly #limited: Limited;

  constructor(
    private readonly behind: KeyMeter,
    rates: KeyTokenRates,
    estimate: (call: MeteredCall) => MeteredCall,
  ) {
    this.#limited = { rates, estimate };
  }

  admit(principal: Principal, call: MeteredCall): Promise<Admission> {
    if (!tpmOf(principal)) return this.behind.admit(principal, call);
    return admitUnderTpm(this.behind, this.#limited, principal, call, 'free');
  }

  /** A batch line's meter: a line over its key's tpm is refused with a cause that waits for the minute to end. */
  collecting(): LineMeter {
    const behind = this.behind.collecting();
    const limited = this.#limited;
    return {
      get records() {
        return behind.records;
      },
      get outbox() {
        return behind.outbox;
      },
      admit: (principal, call) => admitUnderTpm(behind, limited, principal, call, 'balance'),
      finish: () => behind.finish(),
    };
  }
}

/**
 * Admits a signed gateway request or names why not: the signature check (signature.ts),
 * then the replay guard, which records a request only once its MAC verified, so unsigned
 * junk can neither fill the store nor burn a real request id. Never fails open: a replay
 * store that cannot answer refuses the request.
 */
import type { Clock } from '../shared/clock.js';
import type { ReplayGuard } from './replay-guard.port.js';
import { replayKeyOf } from './replay-guard.port.js';
import { hmacKeyOf, verifySignature, type HmacKey, type RejectionReason, type SignedRequest } from './signature.js';

export interface GatewayVerifierOptions {
  secrets: ReadonlyMap<string, string>;
  toleranceSeconds: number;
  replay: ReplayGuard;
  clock: Clock;
}

export type Verdict = { ok: true; kid: string } | { ok: false; reason: RejectionReason | 'replay_store_unavailable' };

export class GatewayVerifier {
  /** The secrets prepared for the HMAC once, not per request. */
  readonly #keys: ReadonlyMap<string, HmacKey>;

  constructor(private readonly options: GatewayVerifierOptions) {
    this.#keys = new Map([...options.secrets].map(([kid, secret]) => [kid, hmacKeyOf(secret)]));
  }

  get configured(): boolean {
    return this.options.secrets.size > 0;
  }

  /**
   * Synchronous when the replay store answers synchronously (in memory): this runs on
   * every gateway request, and an async function with an await costs promise hops.
   */
  verify(header: string | undefined, request: SignedRequest): Verdict | Promise<Verdict> {
    const { toleranceSeconds, replay, clock } = this.options;
    const outcome = verifySignature(header, request, { secrets: this.#keys, toleranceSeconds, nowSeconds: Math.floor(clock.nowMs() / 1000) });
    if (!outcome.ok) return outcome;
    let fresh: boolean | Promise<boolean>;
    try {
      fresh = replay.remember(replayKeyOf(request.requestId, outcome.kid, outcome.t, outcome.matched), 2 * toleranceSeconds);
    } catch {
      return STORE_UNAVAILABLE;
    }
    if (typeof fresh === 'boolean') return verdictOf(fresh, outcome.kid);
    return fresh.then((isFresh) => verdictOf(isFresh, outcome.kid), () => STORE_UNAVAILABLE);
  }
}

const STORE_UNAVAILABLE: Verdict = { ok: false, reason: 'replay_store_unavailable' };
const verdictOf = (fresh: boolean, kid: string): Verdict => (fresh ? { ok: true, kid } : { ok: false, reason: 'replayed' });

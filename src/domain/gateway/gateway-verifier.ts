/**
 * Admits a signed gateway request or names why not: the signature check (signature.ts),
 * then the replay guard, which records a request only once its MAC verified, so unsigned
 * junk can neither fill the store nor burn a real request id. Never fails open: a replay
 * store that cannot answer refuses the request.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { ReplayGuard } from './replay-guard.js';
import { replayKeyOf } from './replay-guard.js';
import { verifySignature, type RejectionReason, type SignedRequest } from './signature.js';

export interface GatewayVerifierOptions {
  secrets: ReadonlyMap<string, string>;
  toleranceSeconds: number;
  replay: ReplayGuard;
  clock: Clock;
}

export type Verdict = { ok: true; kid: string } | { ok: false; reason: RejectionReason | 'replay_store_unavailable' };

export class GatewayVerifier {
  /** The secrets as KeyObjects, made once: an HMAC keyed by a string converts it on every request. */
  readonly #keys: ReadonlyMap<string, KeyObject>;

  constructor(private readonly options: GatewayVerifierOptions) {
    this.#keys = new Map([...options.secrets].map(([kid, secret]) => [kid, createSecretKey(Buffer.from(secret, 'utf8'))]));
  }

  get configured(): boolean {
    return this.options.secrets.size > 0;
  }

  async verify(header: string | undefined, request: SignedRequest): Promise<Verdict> {
    const { toleranceSeconds, replay, clock } = this.options;
    const outcome = verifySignature(header, request, { secrets: this.#keys, toleranceSeconds, nowSeconds: Math.floor(clock.nowMs() / 1000) });
    if (!outcome.ok) return outcome;
    let fresh: boolean;
    try {
      fresh = await replay.remember(replayKeyOf(request.requestId, outcome.kid, outcome.t, outcome.matched), 2 * toleranceSeconds);
    } catch {
      return { ok: false, reason: 'replay_store_unavailable' };
    }
    return fresh ? { ok: true, kid: outcome.kid } : { ok: false, reason: 'replayed' };
  }
}

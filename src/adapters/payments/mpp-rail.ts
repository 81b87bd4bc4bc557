/**
 * The MPP rail (the "Payment" HTTP authentication scheme) through `mppx`: the quote
 * carries its `WWW-Authenticate: Payment …` challenge; a retry's `Authorization:
 * Payment …` credential is verified by mppx against the challenge it issued (HMAC-bound
 * to the secret key, so no state is kept per quote) and answered with `Payment-Receipt`.
 * The challenge id is the payment's reference: the ledger's unique reference refuses a
 * credential presented twice.
 */
import { Credential, Method, Receipt } from 'mppx';
import { Mppx } from 'mppx/server';
import type { PaymentAttempt, PaymentRail, PreparedPayment, Quote, RailOffer } from '../../domain/storefront/payment-rail.port.js';
import { settlementFailed, storefrontError } from '../../domain/shared/storefront-errors.js';
import { fakeCharge } from './mpp-fake-method.js';

export interface MppRailConfig {
  realm: string;
  secretKey: string;
  method: 'fake';
}

const fakeServer = Method.toServer(fakeCharge, {
  verify: async ({ credential }) =>
    Receipt.from({ method: 'fake', reference: `fake_${credential.challenge.id}`, status: 'success', timestamp: new Date().toISOString() }),
});

export class MppRail implements PaymentRail {
  readonly id = 'mpp' as const;
  readonly #mppx;

  constructor(config: MppRailConfig) {
    this.#mppx = Mppx.create({ methods: [fakeServer], secretKey: config.secretKey, realm: config.realm });
  }

  #charge(quote: Quote, authorization?: string) {
    const headers = new Headers({ 'content-type': 'application/json' });
    if (authorization) headers.set('authorization', authorization);
    const request = new Request(quote.resourceUrl, { method: 'POST', headers });
    const amount = (quote.amountMicros / 1_000_000).toFixed(2);
    return this.#mppx.charge({ amount, currency: 'usd', description: quote.description })(request);
  }

  async offer(quote: Quote): Promise<RailOffer | null> {
    const answer = await this.#charge(quote);
    if (answer.status !== 402) return null;
    const challenge = answer.challenge.headers.get('www-authenticate');
    return challenge ? { headers: { 'www-authenticate': challenge } } : null;
  }

  presented(attempt: PaymentAttempt, quote: Quote): PreparedPayment | null {
    const authorization = attempt.header('authorization');
    if (!authorization || !/^Payment\s/i.test(authorization)) return null;
    let id: string;
    try {
      id = Credential.deserialize(authorization).challenge.id;
    } catch {
      throw storefrontError('invalid_request', 'invalid_request', 'Authorization: Payment carries no readable credential');
    }
    return { paymentRef: `mpp:${id}`, complete: () => this.#settle(quote, authorization) };
  }

  async #settle(quote: Quote, authorization: string) {
    const answer = await this.#charge(quote, authorization);
    if (answer.status === 402) {
      const problem = (await answer.challenge.json().catch(() => ({}))) as { type?: string };
      throw settlementFailed(problem.type?.split('/').pop() ?? 'verification-failed');
    }
    const receipted = answer.withReceipt(new Response(null, { status: 200 }));
    const receipt = receipted.headers.get('payment-receipt');
    const headers: Record<string, string> = {};
    if (receipt) headers['payment-receipt'] = receipt;
    return { headers, detail: receipt ? Receipt.deserialize(receipt).reference : null };
  }
}

/**
 * The x402 v2 rail: `@x402/core`'s resource server with `@x402/evm`'s exact scheme,
 * talking to the configured facilitator. Only what the facilitator's `/supported` lists is
 * offered; a presented `PAYMENT-SIGNATURE` is matched against the requirements rebuilt
 * from this request, verified, then settled.
 */
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { PaymentAttempt, PaymentRail, PreparedPayment, Quote, RailOffer } from '../../domain/storefront/payment-rail.port.js';
import { paymentConsumed, providerUnavailable, settlementFailed, storefrontError } from '../../domain/shared/storefront-errors.js';

export interface X402RailConfig {
  facilitatorUrl: string;
  payTo: string;
  network: string;
  asset: string | null;
  timeoutMs: number;
}

const SCHEME = 'exact';
/** Reasons that mean the payment already moved (a reused EIP-3009 nonce). */
const CONSUMED = new Set(['invalid_transaction_state']);

/** A facilitator answer that says "no" (4xx with a body, or a 200 refusal) rather than "I am down". */
interface Refusal {
  statusCode?: number;
  invalidReason?: string;
  errorReason?: string;
}

export class X402Rail implements PaymentRail {
  readonly id = 'x402' as const;
  readonly #server: x402ResourceServer;
  #ready: Promise<void> | null = null;

  constructor(private readonly config: X402RailConfig) {
    const facilitator = new HTTPFacilitatorClient({ url: config.facilitatorUrl, timeoutMs: config.timeoutMs });
    this.#server = new x402ResourceServer(facilitator).register(config.network as `${string}:${string}`, new ExactEvmScheme());
  }

  available(): Promise<boolean> {
    return this.#supported();
  }

  /** Reads the facilitator's `/supported` once; a failure is retried on the next request. */
  async #supported(): Promise<boolean> {
    this.#ready ??= this.#server.initialize();
    try {
      await this.#ready;
    } catch {
      this.#ready = null;
      return false;
    }
    return this.#server.getSupportedKind(2, this.config.network as `${string}:${string}`, SCHEME) !== undefined;
  }

  #requirements(quote: Quote): Promise<PaymentRequirements[]> {
    const price = this.config.asset
      ? { amount: String(quote.amountMicros), asset: this.config.asset, extra: { name: 'USDC', version: '2' } }
      : `$${(quote.amountMicros / 1_000_000).toFixed(2)}`;
    return this.#server.buildPaymentRequirementsFromOptions(
      [{ scheme: SCHEME, payTo: this.config.payTo, price, network: this.config.network as `${string}:${string}`, maxTimeoutSeconds: 300 }],
      {},
    );
  }

  async offer(quote: Quote): Promise<RailOffer | null> {
    if (!(await this.#supported())) return null;
    const accepts = await this.#requirements(quote);
    const required = await this.#server.createPaymentRequiredResponse(
      accepts,
      { url: quote.resourceUrl, description: quote.description, mimeType: 'application/json' },
      'Payment required',
    );
    return { headers: { 'payment-required': encodePaymentRequiredHeader(required) } };
  }

  presented(attempt: PaymentAttempt, quote: Quote): PreparedPayment | null {
    const header = attempt.header('payment-signature');
    if (header === undefined) return null;
    const payload = decodePayload(header);
    const auth = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
    const nonce = typeof auth?.nonce === 'string' && typeof auth.from === 'string' ? `${auth.from}:${auth.nonce}`.toLowerCase() : null;
    if (nonce === null) throw storefrontError('invalid_request', 'invalid_request', 'PAYMENT-SIGNATURE carries no EIP-3009 authorization');
    return {
      paymentRef: `x402:${payload.accepted.network}:${nonce}`,
      complete: () => this.#settle(payload, quote),
    };
  }

  async #settle(payload: PaymentPayload, quote: Quote) {
    if (!(await this.#supported())) throw providerUnavailable('the x402 facilitator');
    const matched = this.#server.findMatchingRequirements(await this.#requirements(quote), payload);
    if (!matched) throw settlementFailed('invalid_payment_requirements');
    const verified = await facilitatorCall(() => this.#server.verifyPayment(payload, matched));
    if (!verified.isValid) throw refusal(verified.invalidReason ?? 'invalid_payload');
    const settled = await facilitatorCall(() => this.#server.settlePayment(payload, matched));
    if (!settled.success) throw refusal(settled.errorReason ?? 'unexpected_settle_error');
    return { headers: { 'payment-response': encodePaymentResponseHeader(settled) }, detail: settled.transaction || null };
  }
}

function decodePayload(header: string): PaymentPayload {
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch {
    throw storefrontError('invalid_request', 'invalid_request', 'PAYMENT-SIGNATURE is not base64 JSON');
  }
  const ok =
    payload !== null && typeof payload === 'object' && payload.x402Version === 2 &&
    payload.accepted !== null && typeof payload.accepted === 'object' && typeof payload.accepted.network === 'string' &&
    payload.payload !== null && typeof payload.payload === 'object';
  if (!ok) throw storefrontError('invalid_request', 'invalid_request', 'PAYMENT-SIGNATURE is not an x402 v2 payment payload');
  return payload;
}

const refusal = (reason: string) => (CONSUMED.has(reason) ? paymentConsumed() : settlementFailed(reason));

/**
 * Runs a facilitator call: a refusal it states (a 4xx carrying a reason) is the payment's
 * fault; a timeout, a 5xx, a network error or an unreadable answer is the provider's.
 */
async function facilitatorCall<T extends VerifyResponse | SettleResponse>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const refused = err as Refusal;
    const reason = refused.invalidReason ?? refused.errorReason;
    if (typeof refused.statusCode === 'number' && refused.statusCode < 500 && reason) throw refusal(reason);
    throw providerUnavailable('the x402 facilitator');
  }
}

/**
 * Tool calls paid per call over x402, with no credential. The call is first run against
 * a meter that admits nothing and reports what it was asked to admit: the service has
 * read and checked the request and priced its worst case (the very hold the storefront
 * meter will take), and nothing billable ran. That worst case is quoted as an anonymous
 * Credits purchase on the storefront (the same rails, facilitator and ledger as
 * `POST {storefront}/plans/{plan}/purchase`); once a payment settles, the call runs as the
 * receipt the purchase issued, drawing on its credit through the storefront meter. A
 * payment credits once: replaying it is `payment_consumed`. What the call does not spend
 * stays on the receipt for further calls. A request the service refuses is refused
 * before anything is quoted or paid.
 */
import type { Caller, Principal } from '../identity/caller.js';
import type { Admission, Meter, MeteredCall } from '../billing/meter.js';
import { costMicros, type TokenPrice } from '../shared/money.js';
import { AppError } from '../shared/errors.js';
import { formatUsd } from '../storefront/amounts.js';
import type { PaymentAttempt } from '../storefront/payment-rail.port.js';
import type { PurchaseService } from '../storefront/purchases.js';
import { receiptHash } from '../storefront/receipts.js';
import { storefrontProjectId, type Seller } from '../storefront/sellers.js';
import type { McpToolName } from './tool-catalogue.js';

/** The tools a payment may buy a call of: the model tools (batches belong to a project). */
export const PAYABLE_TOOLS: ReadonlySet<McpToolName> = new Set(['chat', 'embed', 'moderate', 'classify', 'extract', 'transcribe', 'decide']);

const CENT_MICROS = 10_000;

/** What the quoting meter raises: the call the service asked it to admit. */
class CallToQuote extends AppError {
  constructor(readonly call: MeteredCall) {
    super('payment_required', 'This call must be paid for', { code: 'payment_required' });
  }
}

/** Admits nothing; reports the call it was asked to admit. */
const QUOTING_METER: Meter = {
  admit(_principal: Principal, call: MeteredCall): Admission {
    throw new CallToQuote(call);
  },
};

export interface McpPaymentDeps {
  purchases: Pick<PurchaseService, 'purchase'>;
  seller: Seller;
  /** The Credits plan anonymous calls buy. */
  planId: string;
  /** The seller's storefront meter: a paid call draws on its receipt's credit. */
  meter: Meter;
  priceOf(model: string): TokenPrice;
  /** Absolute URLs: the MCP endpoint (the resource paid for) and the storefront root. */
  resourceUrl: string;
  storefrontUrl: string;
}

/** The call itself, run on behalf of a caller (the tool's service call). */
export type CallRun<T> = (caller: Caller) => Promise<T>;

export interface PaidCall<T> {
  value: T;
  /** The rail's answer headers (x402: `payment-response`). */
  headers: Record<string, string>;
  /** The receipt that holds what the call did not spend. */
  receipt: string;
}

export class McpPayments {
  constructor(private readonly deps: McpPaymentDeps) {}

  /**
   * Quotes `run`, settles the payment `attempt` presents for it, and runs it as the
   * receipt bought. With no payment, throws the 402 quote (its `payment-required` header
   * is the x402 PaymentRequired); a refused payment throws the storefront's payment error;
   * a request the service refuses throws that refusal, before any quote.
   */
  async run<T>(tool: McpToolName, run: CallRun<T>, attempt: PaymentAttempt): Promise<PaidCall<T>> {
    const { seller, planId } = this.deps;
    const amountMicros = await this.#quote(run);
    const result = await this.deps.purchases.purchase({
      seller,
      planId,
      body: { amountUsd: formatUsd(amountMicros) },
      agentId: null,
      resourceUrl: `${this.deps.resourceUrl}#${tool}`,
      storefrontUrl: this.deps.storefrontUrl,
      attempt,
    });
    const receipt = result.body.receipt;
    if (!receipt) throw new AppError('internal', 'an anonymous purchase issued no receipt');
    const receiptId = receiptHash(receipt);
    const caller: Caller = {
      principal: { kind: 'receipt', projectId: storefrontProjectId(seller.id), keyId: null, subject: `receipt:${receiptId}`, payer: { kind: 'receipt', receiptId } },
      meter: this.deps.meter,
    };
    return { value: await run(caller), headers: result.headers, receipt };
  }

  /**
   * The call's worst case as the storefront meter will hold it, in whole cents and at
   * least the plan's minimum. The same arguments always quote the same amount, so a paid
   * retry matches its quote.
   */
  async #quote(run: CallRun<unknown>): Promise<number> {
    const quoting: Caller = {
      principal: { kind: 'receipt', projectId: storefrontProjectId(this.deps.seller.id), keyId: null, subject: null, payer: { kind: 'receipt', receiptId: '' } },
      meter: QUOTING_METER,
    };
    try {
      await run(quoting);
    } catch (err) {
      if (!(err instanceof CallToQuote)) throw err;
      const { call } = err;
      const worst = call.estimateMicros ?? costMicros(this.deps.priceOf(call.model), call.inputTokens, call.maxOutputTokens);
      const minimum = this.deps.seller.plans.get(this.deps.planId)?.minimumMicros ?? CENT_MICROS;
      return Math.max(minimum, Math.ceil(worst / CENT_MICROS) * CENT_MICROS);
    }
    throw new AppError('internal', 'a paid tool call ran without being metered');
  }
}

/**
 * Tool calls paid per call over x402, with no credential: the call's worst case is quoted
 * as an anonymous Credits purchase on the storefront (the same rails, facilitator and
 * ledger as `POST {storefront}/plans/{plan}/purchase`), and once the payment settles the
 * call runs as the receipt that purchase issued, drawing on its credit through the
 * storefront meter. A payment credits once: replaying it is `payment_consumed`. What the
 * call does not spend stays on the receipt for further calls.
 */
import type { ModelConfig } from '../../config/schema.js';
import type { Caller } from '../identity/caller.js';
import type { Meter } from '../billing/meter.js';
import { costMicros } from '../shared/money.js';
import { AppError } from '../shared/errors.js';
import { formatUsd } from '../storefront/amounts.js';
import type { PaymentAttempt } from '../storefront/payment-rail.js';
import type { PurchaseService } from '../storefront/purchases.js';
import { receiptHash } from '../storefront/receipts.js';
import { storefrontProjectId, type Seller } from '../storefront/sellers.js';
import type { McpToolName } from './tool-catalogue.js';

/** The tools a payment may buy a call of: the model tools (batches belong to a project). */
export const PAYABLE_TOOLS: ReadonlySet<McpToolName> = new Set(['chat', 'embed', 'moderate', 'decide']);

const CENT_MICROS = 10_000;
/** Per-text framing and a margin over the argument bytes, so the quote covers the meter's hold. */
const FRAMING_TOKENS = 64;
const TOKENS_PER_ARGUMENT_BYTE = 4;

export interface McpPaymentDeps {
  purchases: Pick<PurchaseService, 'purchase'>;
  seller: Seller;
  /** The Credits plan anonymous calls buy. */
  planId: string;
  /** The seller's storefront meter: a paid call draws on its receipt's credit. */
  meter: Meter;
  models: { find(name: string): ModelConfig | undefined };
  /** Absolute URLs: the MCP endpoint (the resource paid for) and the storefront root. */
  resourceUrl: string;
  storefrontUrl: string;
}

export interface PaidCall {
  caller: Caller;
  /** The rail's answer headers (x402: `payment-response`). */
  headers: Record<string, string>;
  /** The receipt that holds what the call does not spend. */
  receipt: string;
}

export class McpPayments {
  constructor(private readonly deps: McpPaymentDeps) {}

  /**
   * Settles the payment `attempt` presents for this call and answers the caller it runs
   * as; with no payment, throws the 402 quote (its `payment-required` header is the x402
   * PaymentRequired); a refused payment throws the storefront's payment error.
   */
  async pay(tool: McpToolName, args: Readonly<Record<string, unknown>>, attempt: PaymentAttempt): Promise<PaidCall> {
    const { seller, planId } = this.deps;
    const amountMicros = this.#amountOf(args);
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
    return { caller, headers: result.headers, receipt };
  }

  /**
   * The call's worst case, in whole cents and at least the plan's minimum: input tokens
   * bounded by the arguments' bytes (no tokenizer makes more tokens than bytes, and every
   * text of the call is in them), output by the request's cap or the model's default. The
   * same arguments always quote the same amount, so a paid retry matches its quote.
   */
  #amountOf(args: Readonly<Record<string, unknown>>): number {
    const name = Object.hasOwn(args, 'model') ? args.model : undefined;
    const model = typeof name === 'string' ? this.deps.models.find(name) : undefined;
    const minimum = this.deps.seller.plans.get(this.deps.planId)?.minimumMicros ?? CENT_MICROS;
    if (!model) return minimum;
    const inputTokens = Buffer.byteLength(JSON.stringify(args), 'utf8') * TOKENS_PER_ARGUMENT_BYTE + FRAMING_TOKENS;
    const cap = Object.hasOwn(args, 'max_tokens') && typeof args.max_tokens === 'number' ? args.max_tokens : model.maxOutputTokens;
    const outputTokens = model.entry.routes.includes('chat') ? cap : 0;
    const worst = costMicros(model.price, inputTokens, outputTokens);
    return Math.max(minimum, Math.ceil(worst / CENT_MICROS) * CENT_MICROS);
  }
}

/**
 * Payments over MCP. The x402 MCP transport (v2) on the wire: a payment challenge is a tool result with
 * `isError: true` whose `structuredContent` is the x402 `PaymentRequired` object; the
 * client retries the call with the payment payload in `params._meta["x402/payment"]`;
 * the served answer carries the settlement in `_meta["x402/payment-response"]`. The
 * storefront's x402 rail speaks HTTP headers, so this converts between the two. MPP rides
 * beside it in `_meta` (./mpp.ts), so one challenge offers both rails.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import type { AppError } from '../../../domain/shared/errors.js';
import type { PaymentAttempt } from '../../../domain/storefront/payment-rail.port.js';
import { mppAuthorization, mppChallengeMeta, mppReceiptMeta } from './mpp.js';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** The receipt a paid call leaves, for the credit it did not spend. */
export const RECEIPT_META = 'sluice/receipt';

/** The payment a call's `_meta` presents (x402 or MPP), as the rails read a retried purchase. */
export async function paymentAttemptOf(meta: Readonly<Record<string, unknown>> | undefined): Promise<PaymentAttempt> {
  const payment = meta && Object.hasOwn(meta, PAYMENT_META) ? meta[PAYMENT_META] : undefined;
  // The rail checks the payload's shape; anything present is handed to it as a header would be.
  const header = payment === undefined ? undefined : encodePaymentSignatureHeader(payment as PaymentPayload);
  const authorization = (await mppAuthorization(meta))?.header;
  return {
    header: (name) => (name === 'payment-signature' ? header : name === 'authorization' ? authorization : undefined),
    paymentReference: undefined,
    method: 'POST',
    body: null,
  };
}

/**
 * The challenge of a purchase's 402 quote as a tool result: the x402 PaymentRequired as
 * structured content (or `otherwise`, the refusal, when x402 is not offered), the MPP
 * challenges in `_meta`; null when neither rail is offered.
 */
export async function paymentRequiredResult(quote: AppError, otherwise: CallToolResult): Promise<CallToolResult | null> {
  const header = quote.challenge?.headers?.['payment-required'];
  const mpp = await mppChallengeMeta(quote.challenge?.headers);
  if (header === undefined && mpp === null) return null;
  const required = header === undefined ? null : decodePaymentRequiredHeader(header);
  const result: CallToolResult = required
    ? { isError: true, content: [{ type: 'text', text: JSON.stringify(required) }], structuredContent: required as unknown as Record<string, unknown> }
    : otherwise;
  return mpp ? { ...result, _meta: mpp } : result;
}

/** What a settled payment adds to the answer's `_meta`: the rail's settlement, and the receipt left for further calls. */
export async function settlementMeta(
  headers: Readonly<Record<string, string>>,
  receipt: string,
  meta: Readonly<Record<string, unknown>> | undefined,
): Promise<Record<string, unknown>> {
  const response = headers['payment-response'];
  const mpp = await mppAuthorization(meta);
  return {
    ...(response === undefined ? {} : { [PAYMENT_RESPONSE_META]: decodePaymentResponseHeader(response) }),
    ...(mpp ? await mppReceiptMeta(headers, mpp.challengeId) : {}),
    [RECEIPT_META]: receipt,
  };
}

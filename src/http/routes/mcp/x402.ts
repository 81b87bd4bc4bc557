/**
 * The x402 MCP transport (v2) on the wire: a payment challenge is a tool result with
 * `isError: true` whose `structuredContent` is the x402 `PaymentRequired` object; the
 * client retries the call with the payment payload in `params._meta["x402/payment"]`;
 * the served answer carries the settlement in `_meta["x402/payment-response"]`. The
 * storefront's x402 rail speaks HTTP headers, so this converts between the two.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import type { AppError } from '../../../domain/shared/errors.js';
import type { PaymentAttempt } from '../../../domain/storefront/payment-rail.port.js';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** The receipt a paid call leaves, for the credit it did not spend. */
export const RECEIPT_META = 'sluice/receipt';

/** The payment a call's `_meta` presents, as the rails read a retried purchase. */
export function paymentAttemptOf(meta: Readonly<Record<string, unknown>> | undefined): PaymentAttempt {
  const payment = meta && Object.hasOwn(meta, PAYMENT_META) ? meta[PAYMENT_META] : undefined;
  // The rail checks the payload's shape; anything present is handed to it as a header would be.
  const header = payment === undefined ? undefined : encodePaymentSignatureHeader(payment as PaymentPayload);
  return {
    header: (name) => (name === 'payment-signature' ? header : undefined),
    paymentReference: undefined,
    method: 'POST',
    body: null,
  };
}

/** The x402 challenge of a purchase's 402 quote as a tool result, or null when x402 is not offered. */
export function paymentRequiredResult(quote: AppError): CallToolResult | null {
  const header = quote.challenge?.headers?.['payment-required'];
  if (header === undefined) return null;
  const required = decodePaymentRequiredHeader(header);
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    structuredContent: required as unknown as Record<string, unknown>,
  };
}

/** What a settled payment adds to the answer's `_meta`. */
export function settlementMeta(headers: Readonly<Record<string, string>>, receipt: string): Record<string, unknown> {
  const response = headers['payment-response'];
  return { ...(response === undefined ? {} : { [PAYMENT_RESPONSE_META]: decodePaymentResponseHeader(response) }), [RECEIPT_META]: receipt };
}

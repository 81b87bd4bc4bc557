/**
 * The storefront's refusals: AppErrors whose challenge carries the spec's body form
 * `{error: "<code>", message, …}` instead of the plain routes' envelope. They sit in the
 * shared kernel because the adapters behind the storefront's ports (payment rails, agent
 * tokens) throw them as well as the storefront's services.
 */
import { AppError, type ErrorKind } from './errors.js';

export function storefrontError(
  kind: ErrorKind,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
): AppError {
  return new AppError(kind, message, {
    code,
    challenge: { body: { error: code, message, ...extra }, ...(headers ? { headers } : {}) },
  });
}

/** A purchase that paid nothing or could not settle: a 402 that is not a price quote. */
export const paymentError = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  storefrontError('payment_required', code, message, extra, { 'cache-control': 'no-store' });

export const settlementFailed = (reason: string) =>
  paymentError('settlement_failed', 'The payment did not settle; restart the purchase for a fresh quote', { settlementReason: reason });

export const providerUnavailable = (detail: string) =>
  paymentError('payment_provider_unavailable', `The payment provider is unavailable (${detail}); retry unchanged with backoff`);

export const paymentConsumed = () =>
  paymentError('payment_consumed', 'This payment was already settled and credited; reconcile before paying again');

export const invalidToken = (reason: string, message: string) =>
  storefrontError('authentication', 'invalid_token', message, { reason });

export const invalidReceipt = () =>
  storefrontError('authentication', 'invalid_receipt', 'The receipt is malformed, pending, revoked or was issued by another seller');

export const sellerNotFound = () => storefrontError('not_found', 'seller_not_found', 'This host does not map to a seller');

export const planNotFound = (planId: string) =>
  storefrontError('not_found', 'plan_not_found', `No plan "${planId.slice(0, 64)}" in this seller's catalog`);

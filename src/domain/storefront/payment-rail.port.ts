/**
 * The payment rails' port. A rail adds its offer to a purchase's 402 quote and, when a
 * retry presents its kind of payment, verifies and settles it. The purchase service
 * grants credit only after a rail settled, in the transaction that records the
 * payment's reference.
 */
import type { Rail } from './storefront.types.js';

/** What the purchase costs and who buys it; rebuilt identically on every request. */
export interface Quote {
  sellerId: string;
  planId: string;
  description: string;
  amountMicros: number;
  /** The buying agent, or null for an anonymous purchase (which gets a receipt). */
  agentId: string | null;
  /** The absolute URL of the purchase route that was called. */
  resourceUrl: string;
  /** Absolute URL of the storefront root (for the card rail's pages). */
  storefrontUrl: string;
  /** The request asked for a card checkout (`checkout: true`). */
  checkout: boolean;
}

/** The request as the rails read it. */
export interface PaymentAttempt {
  header(name: string): string | undefined;
  /** `paymentReference` from the body (a card checkout id). */
  paymentReference: string | undefined;
  method: string;
  /** Exact body bytes, for rails that bind a credential to the request. */
  body: Buffer | null;
}

export interface RailOffer {
  headers?: Record<string, string>;
  /** Merged into the quote's JSON body. */
  body?: Record<string, unknown>;
}

/** A presented payment, named before anything is settled. */
export interface PreparedPayment {
  /** Unique across the ledger: the same payment always has the same reference. */
  paymentRef: string;
  /** Verifies and settles (throws a storefront error otherwise); the reply's headers and what to keep with the movement. */
  complete(): Promise<{ headers: Record<string, string>; detail: string | null }>;
}

export interface PaymentRail {
  readonly id: Rail;
  /** Its part of the 402; null when it cannot be offered right now (e.g. the facilitator is unreachable). */
  offer(quote: Quote): Promise<RailOffer | null>;
  /** Whether the rail can take payments now (x402: its facilitator lists the network); absent: always. */
  available?(): Promise<boolean>;
  /** The payment this request presents on this rail, or null when it presents none. */
  presented(attempt: PaymentAttempt, quote: Quote): Promise<PreparedPayment | null> | PreparedPayment | null;
}

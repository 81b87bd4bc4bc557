/**
 * The card rail's port: a hosted checkout (no HTTP here). `fake` serves a local page for
 * tests and demos; `stripe` is Stripe Checkout.
 */
export type CheckoutStatus = 'open' | 'paid' | 'expired' | 'failed' | 'refunded';

export interface CardRail {
  readonly id: 'fake' | 'stripe';
  /** The smallest card charge, in cents (50 for USD). */
  readonly minimumCents: number;
  createCheckout(input: {
    purchaseId: string;
    amountCents: number;
    currency: 'usd';
    agentId: string;
    successUrl: string;
    cancelUrl: string;
    description: string;
  }): Promise<{ checkoutId: string; url: string; expiresAt: number }>;
  /** Throws when the provider cannot be reached. */
  getStatus(checkoutId: string): Promise<CheckoutStatus | null>;
  verifyWebhook?(rawBody: Buffer, headers: Readonly<Record<string, string | undefined>>): Promise<{ checkoutId: string; status: string } | null>;
}

/** A checkout as the built-in fake provider's local page shows it. */
export interface LocalCheckout {
  id: string;
  amountCents: number;
  description: string;
  status: CheckoutStatus;
  csrf: string;
}

/**
 * A card provider that serves its own checkout page from Sluice (the built-in fake, for
 * tests and demos): the page reads a checkout and its buttons pay or decline it.
 */
export interface LocalCheckoutPages {
  page(checkoutId: string): Promise<LocalCheckout | null>;
  /** `forbidden` for a wrong CSRF token; null for an unknown checkout. */
  decide(checkoutId: string, csrf: string, action: 'pay' | 'decline'): Promise<CheckoutStatus | 'forbidden' | null>;
}

/**
 * The built-in `fake` card provider, for tests and demos (enabled only by config): an
 * in-process table of checkouts, paid or declined on a local page whose buttons POST
 * with a per-checkout CSRF token. Nothing leaves the process.
 */
import { timingSafeEqual } from 'node:crypto';
import type { CardRail, CheckoutStatus, LocalCheckoutPages } from '../../../domain/storefront/card-rail.port.js';
import type { Clock } from '../../../domain/shared/clock.js';
import { newId, randomString } from '../../../domain/shared/ids.js';

interface FakeCheckout {
  id: string;
  amountCents: number;
  description: string;
  status: CheckoutStatus;
  csrf: string;
  expiresAt: number;
}

const TTL_MS = 30 * 60_000;

export class FakeCardRail implements CardRail, LocalCheckoutPages {
  readonly id = 'fake' as const;
  readonly minimumCents = 50;
  readonly #checkouts = new Map<string, FakeCheckout>();

  constructor(private readonly clock: Clock) {}

  async createCheckout(input: { amountCents: number; description: string }) {
    const id = newId('chk_');
    const expiresAt = this.clock.nowMs() + TTL_MS;
    this.#checkouts.set(id, { id, amountCents: input.amountCents, description: input.description, status: 'open', csrf: randomString(24, 'base64url'), expiresAt });
    return { checkoutId: id, url: `/checkout/${id}`, expiresAt };
  }

  async getStatus(checkoutId: string): Promise<CheckoutStatus | null> {
    const checkout = this.#checkouts.get(checkoutId);
    if (!checkout) return null;
    if (checkout.status === 'open' && checkout.expiresAt <= this.clock.nowMs()) checkout.status = 'expired';
    return checkout.status;
  }

  /** What the checkout page shows (status current as of now). */
  async page(checkoutId: string): Promise<Omit<FakeCheckout, 'expiresAt'> | null> {
    const status = await this.getStatus(checkoutId);
    const checkout = this.#checkouts.get(checkoutId);
    return status && checkout ? { id: checkout.id, amountCents: checkout.amountCents, description: checkout.description, status, csrf: checkout.csrf } : null;
  }

  /** A button press: pays or declines an open checkout when the form's CSRF token matches. */
  async decide(checkoutId: string, csrf: string, action: 'pay' | 'decline'): Promise<CheckoutStatus | 'forbidden' | null> {
    const status = await this.getStatus(checkoutId);
    const checkout = this.#checkouts.get(checkoutId);
    if (!status || !checkout) return null;
    const given = Buffer.from(csrf);
    const expected = Buffer.from(checkout.csrf);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forbidden';
    if (status === 'open') checkout.status = action === 'pay' ? 'paid' : 'failed';
    return checkout.status;
  }

  /** Operator/test hook: force a state (expire, refund). */
  force(checkoutId: string, status: CheckoutStatus): boolean {
    const checkout = this.#checkouts.get(checkoutId);
    if (!checkout) return false;
    checkout.status = status;
    return true;
  }
}

/**
 * Stripe Checkout as the card provider (`mode=payment`, amount in cents, USD). Written
 * against Stripe's documented REST API with undici rather than the Stripe SDK, which
 * the project does not otherwise need; it cannot be exercised from this project's
 * offline tests (docs/storefront.md).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { request } from 'undici';
import type { CardRail, CheckoutStatus } from '../../../domain/storefront/card-rail.port.js';

const API = 'https://api.stripe.com/v1';
const TOLERANCE_S = 300;

export class StripeCardRail implements CardRail {
  readonly id = 'stripe' as const;
  readonly minimumCents = 50;

  constructor(
    private readonly secretKey: string,
    private readonly webhookSecret: string | null,
  ) {}

  async #call(method: 'GET' | 'POST', path: string, form?: URLSearchParams): Promise<Record<string, unknown>> {
    const response = await request(`${API}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form?.toString(),
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
    });
    const body = (await response.body.json()) as Record<string, unknown>;
    if (response.statusCode >= 400) throw new Error(`stripe ${path}: ${response.statusCode}`);
    return body;
  }

  async createCheckout(input: { purchaseId: string; amountCents: number; currency: 'usd'; successUrl: string; cancelUrl: string; description: string }) {
    const form = new URLSearchParams({
      mode: 'payment',
      client_reference_id: input.purchaseId,
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': input.currency,
      'line_items[0][price_data][unit_amount]': String(input.amountCents),
      'line_items[0][price_data][product_data][name]': input.description,
    });
    const session = await this.#call('POST', '/checkout/sessions', form);
    return { checkoutId: String(session.id), url: String(session.url), expiresAt: Number(session.expires_at) * 1000 };
  }

  async getStatus(checkoutId: string): Promise<CheckoutStatus | null> {
    if (!/^cs_[A-Za-z0-9_]+$/.test(checkoutId)) return null;
    const session = await this.#call('GET', `/checkout/sessions/${checkoutId}?expand[]=payment_intent`);
    const intent = session.payment_intent as { status?: string; latest_charge?: { refunded?: boolean } } | null;
    if (intent?.latest_charge?.refunded) return 'refunded';
    if (session.payment_status === 'paid') return 'paid';
    if (session.status === 'expired') return 'expired';
    if (intent?.status === 'canceled' || intent?.status === 'requires_payment_method') return session.status === 'open' ? 'open' : 'failed';
    return 'open';
  }

  /** `Stripe-Signature: t=…,v1=…` over `${t}.${rawBody}`, any v1 matching, within 300 s. */
  async verifyWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | undefined>>) {
    const header = headers['stripe-signature'];
    if (!this.webhookSecret || !header) return null;
    const parts = header.split(',').map((p) => p.split('='));
    const t = parts.find(([k]) => k === 't')?.[1];
    if (!t || !/^\d{1,20}$/.test(t) || Math.abs(Date.now() / 1000 - Number(t)) > TOLERANCE_S) return null;
    const expected = createHmac('sha256', this.webhookSecret).update(`${t}.`).update(rawBody).digest();
    const matches = parts.some(([k, v]) => k === 'v1' && v && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
    if (!matches) return null;
    const event = JSON.parse(rawBody.toString('utf8')) as { type?: string; data?: { object?: { id?: string; payment_status?: string } } };
    const session = event.data?.object;
    return session?.id ? { checkoutId: session.id, status: session.payment_status ?? event.type ?? 'unknown' } : null;
  }
}

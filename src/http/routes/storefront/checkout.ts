/**
 * The card checkout's pages: GET /checkout/{id}/status for every provider, and for the
 * built-in `fake` provider its hosted page, whose Pay and Decline buttons are POST forms
 * carrying the checkout's CSRF token (a GET changes nothing; the page cannot be framed).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { StorefrontAccounts } from '../../../domain/storefront/accounts.js';
import type { CardRail, LocalCheckoutPages } from '../../../domain/storefront/card-rail.port.js';
import { sellerOf } from '../../auth/storefront-context.js';
import { storefrontError } from '../../../domain/shared/storefront-errors.js';

const Params = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' }) });
const DecisionBody = Type.Object({ csrf: Type.String({ maxLength: 64 }) });

const unknownCheckout = () => storefrontError('not_found', 'checkout_not_found', 'No such checkout');

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(reply: FastifyReply, status: number, body: string) {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    })
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}button{font-size:1rem;padding:.5rem 1rem;margin-right:.5rem}</style>
</head><body>${body}</body></html>`);
}

function fakePages(scope: FastifyInstance, fake: LocalCheckoutPages): void {
  scope.get<{ Params: { id: string } }>('/checkout/:id', { schema: { hide: true, params: Params } }, async (request, reply) => {
    const checkout = await fake.page(request.params.id);
    if (!checkout) throw unknownCheckout();
    const amount = (checkout.amountCents / 100).toFixed(2);
    const id = escape(checkout.id);
    const form = (action: 'pay' | 'decline', label: string) =>
      `<form method="post" action="${id}/${action}" style="display:inline"><input type="hidden" name="csrf" value="${escape(checkout.csrf)}"><button type="submit" id="${action}">${label}</button></form>`;
    const actions = checkout.status === 'open' ? `${form('pay', 'Pay (test)')}${form('decline', 'Decline (test)')}` : '';
    return html(reply, 200, `<h1>${escape(checkout.description)}</h1><p>Amount: <strong>$${amount}</strong> (test card, no money moves)</p>
<p>Status: <strong id="status">${checkout.status}</strong></p>${actions}`);
  });

  for (const action of ['pay', 'decline'] as const) {
    scope.post<{ Params: { id: string }; Body: { csrf: string } }>(
      `/checkout/:id/${action}`,
      { schema: { hide: true, params: Params, body: DecisionBody } },
      async (request, reply) => {
        const outcome = await fake.decide(request.params.id, request.body.csrf, action);
        if (outcome === null) throw unknownCheckout();
        if (outcome === 'forbidden') throw storefrontError('permission', 'csrf_mismatch', 'The form is stale or forged; reload the checkout page');
        return html(reply, 200, `<h1>Checkout ${outcome === 'paid' ? 'paid' : outcome}</h1><p>Status: <strong id="status">${outcome}</strong></p><p>Return to your agent: it retries the purchase with this checkout as its paymentReference.</p>`);
      },
    );
  }
}

export interface CheckoutRouteDeps {
  /** The card provider, when card payments are configured. */
  card: CardRail | null;
  /** The built-in fake provider, whose hosted page is served here. */
  fakeCard: LocalCheckoutPages | null;
  accounts: StorefrontAccounts;
}

export function registerCheckoutRoutes(scope: FastifyInstance, { card, fakeCard, accounts }: CheckoutRouteDeps): void {
  if (!card) return;
  scope.get<{ Params: { id: string } }>('/checkout/:id/status', { schema: { hide: true, params: Params } }, async (request) => {
    const checkout = await accounts.checkout(sellerOf(request).id, request.params.id);
    if (!checkout) throw unknownCheckout();
    const status = await card.getStatus(checkout.id);
    return { checkoutId: checkout.id, status: status ?? 'expired' };
  });
  if (fakeCard) fakePages(scope, fakeCard);
}

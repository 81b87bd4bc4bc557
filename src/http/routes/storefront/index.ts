/**
 * The agent storefront under its prefix: sellers from the request's host, the catalog,
 * purchases and extensions (402 quotes over x402, MPP and card), the token exchange,
 * entitlements, the card checkout pages, and the storefront chat route.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Container } from '../../../container.js';
import type { Storefront } from '../../../composition/storefront.js';
import { sellerNotFound } from '../../../domain/shared/storefront-errors.js';
import { setStorefrontErrorHandler } from './errors.js';
import { registerPurchaseRoutes } from './purchases.js';
import { registerCatalogRoutes } from './catalog.js';
import { registerTokenRoute } from './tokens.js';
import { registerCheckoutRoutes } from './checkout.js';
import { registerStorefrontChat } from './chat.js';
import { registerScopeCors } from '../../plugins/cors.js';
import type { ScopePolicy } from '../../scope-policy.js';

/**
 * Browsers may buy: the x402 client sends PAYMENT-SIGNATURE and a request header
 * Access-Control-Expose-Headers; scripts read the quote's and the settlement's headers.
 */
const POLICY: ScopePolicy = {
  cors: {
    allowedHeaders: ['authorization', 'content-type', 'gw-agent-authorization', 'payment-signature', 'access-control-expose-headers'],
    exposedHeaders: ['x-request-id', 'payment-required', 'payment-response', 'www-authenticate', 'payment-receipt', 'retry-after'],
  },
};

/** Form bodies (the token exchange, the checkout buttons) as a null-prototype record. */
function parseForm(text: string): Record<string, string> {
  const form = Object.create(null) as Record<string, string>;
  for (const [name, value] of new URLSearchParams(text)) if (!(name in form)) form[name] = value;
  return form;
}

export const storefrontRoutes: FastifyPluginAsync<{ container: Container; storefront: Storefront }> = async (scope, { container, storefront }) => {
  scope.decorateRequest('seller', null);
  setStorefrontErrorHandler(scope);
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, parseForm(body as string)));
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, scope: route.config?.scope ?? POLICY };
  });
  registerScopeCors(scope);
  scope.addHook('onRequest', async (request) => {
    const seller = storefront.sellers.forHost(request.host);
    if (!seller) throw sellerNotFound();
    request.seller = seller;
  });
  registerCatalogRoutes(scope, storefront, container.config);
  registerPurchaseRoutes(scope, storefront);
  registerTokenRoute(scope, storefront);
  registerCheckoutRoutes(scope, storefront);
  await registerStorefrontChat(scope, container, storefront);
};

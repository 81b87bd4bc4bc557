/**
 * The agent storefront under its prefix: the seller from the request's host, then the
 * catalog, purchases and extensions (402 quotes over x402, MPP and card), the token
 * exchange, entitlements and the card checkout pages, where a credential is optional; and
 * the storefront chat route, `{storefront}/gateway/v1/chat/completions`, the same chat
 * route module as /v1 under the storefront's strategy and the seller's meter.
 *
 * Error bodies: the storefront's own refusals as they are (`{error: "<code>", …}`); on the
 * storefront's routes anything else is `{error: "invalid_request" | "not_found", message}`,
 * on chat the envelope with the spec's statuses (420 for context_length_exceeded, 429
 * requests_per_minute_exceeded per agent); a server fault is `500 {error: {message, type}}`.
 */
import type { Meter } from '../../domain/billing/meter.js';
import type { AgentTokenService } from '../../domain/storefront/agent-tokens.port.js';
import { AppError } from '../../domain/shared/errors.js';
import type { Seller, SellerDirectory } from '../../domain/storefront/sellers.js';
import { sellerNotFound } from '../../domain/shared/storefront-errors.js';
import { OUTPUT_CAP_HEADER, REMAINING_CREDIT_HEADER } from '../../domain/storefront/storefront-meter.js';
import type { RateLimiter } from '../../domain/identity/rate-limiter.port.js';
import { SELLER_PROPERTY, tokenAudience } from '../auth/storefront-context.js';
import { StorefrontStrategy } from '../auth/storefront-strategy.js';
import { errorEnvelope, type ErrorEnvelope } from '../errors.js';
import type { BoundRoutes } from '../route-module.js';
import type { ScopeDeclaration } from './api-scope.js';
import type { ScopeErrorBody } from '../scope-policy.js';

export interface StorefrontScopeDeps {
  prefix: string;
  sellers: SellerDirectory;
  tokens: AgentTokenService;
  meterOf(seller: Seller): Meter;
  /** Chat calls per agent or receipt per minute. */
  limiter: RateLimiter;
  requestsPerMinute: number;
}

export interface StorefrontRoutes {
  /** The catalog, purchases, tokens, entitlements and checkout pages. */
  storefront: readonly BoundRoutes[];
  /** The chat route. */
  chat: BoundRoutes;
}

const INTERNAL_BODY = { error: { message: 'Internal server error', type: 'internal_error' } };

const isEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'object';

const storefrontBody: ScopeErrorBody = (_request, error, mapped) => {
  if (error.challenge?.body !== undefined) return mapped.body;
  if (mapped.status >= 500) return INTERNAL_BODY;
  const message = isEnvelope(mapped.body) ? mapped.body.error.message : 'Invalid request';
  return { error: mapped.status === 404 ? 'not_found' : 'invalid_request', message };
};

const chatBody: ScopeErrorBody = (_request, error, mapped) => {
  if (mapped.status >= 500) return INTERNAL_BODY;
  if (error.kind !== 'rate_limit') return mapped.body;
  return errorEnvelope(new AppError('rate_limit', error.message, { code: 'requests_per_minute_exceeded', retryAfterSeconds: error.retryAfterSeconds }));
};

export function storefrontScope(deps: StorefrontScopeDeps, routes: StorefrontRoutes): ScopeDeclaration {
  const strategy = (credential: 'required' | 'optional') =>
    new StorefrontStrategy({ tokens: deps.tokens, meterOf: deps.meterOf, audienceOf: tokenAudience, tokenPath: `${deps.prefix}/oauth2/token`, credential });
  return {
    prefix: deps.prefix,
    routes: [],
    policy: {
      tenant: {
        property: SELLER_PROPERTY,
        resolve: (request) => {
          const seller = deps.sellers.forHost(request.host);
          if (!seller) throw sellerNotFound();
          return seller;
        },
      },
      // The token exchange and the checkout buttons post forms.
      forms: true,
    },
    scopes: [
      {
        prefix: '',
        strategy: strategy('optional'),
        routes: routes.storefront,
        policy: {
          // Browsers may buy: the x402 client sends PAYMENT-SIGNATURE and a request header
          // Access-Control-Expose-Headers; scripts read the quote's and the settlement's headers.
          cors: {
            allowedHeaders: ['authorization', 'content-type', 'gw-agent-authorization', 'payment-signature', 'access-control-expose-headers'],
            exposedHeaders: ['x-request-id', 'payment-required', 'payment-response', 'www-authenticate', 'payment-receipt', 'retry-after'],
          },
          errorBody: storefrontBody,
        },
      },
      {
        prefix: '/gateway/v1',
        strategy: strategy('required'),
        routes: [routes.chat],
        policy: {
          rateLimit: {
            requestsPerMinute: deps.requestsPerMinute,
            limiter: deps.limiter,
            keyOf: (principal) => `storefront|${principal.projectId}|${principal.subject ?? ''}`,
            exceededMessage: 'Rate limit exceeded: too many requests per minute for this agent',
          },
          cors: {
            allowedHeaders: ['authorization', 'content-type', 'gw-agent-authorization'],
            exposedHeaders: ['x-request-id', 'retry-after', REMAINING_CREDIT_HEADER, OUTPUT_CAP_HEADER],
          },
          security: [
            { name: 'StorefrontAgentToken', scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token from POST {storefront}/oauth2/token' } },
            { name: 'StorefrontReceipt', scheme: { type: 'apiKey', in: 'header', name: 'Authorization', description: '"Receipt <receipt id>" from an anonymous Credits purchase' } },
          ],
          statusOverrides: { context_length: 420 },
          errorBody: chatBody,
          trailers: [REMAINING_CREDIT_HEADER],
        },
      },
    ],
  };
}

/**
 * The agent storefront under its prefix: the seller from the request's host, then the
 * catalog, purchases and extensions (402 quotes over x402, MPP and card), the token
 * exchange, entitlements and the card checkout pages, where a credential is optional; and
 * the storefront chat route, `{storefront}/gateway/v1/chat/completions`, the same chat
 * route module as /v1 under the storefront's strategy and the seller's meter.
 *
 * Error bodies: the storefront's own refusals as they are (`{error: "<code>", …}`); on the
 * storefront's routes anything else is `{error: "invalid_request" | "not_found", message}`,
 * on chat the chat wire's envelope with the spec's statuses (420 for
 * context_length_exceeded, 429 requests_per_minute_exceeded per agent); a server fault is
 * `500 {error: {message, type}}` (on chat, the storefront's variant of OpenAI's envelope).
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
import type { WireErrorFormat } from '../../wire/error-format.js';
import { exposedMessage, OPENAI_ERRORS, openAIErrorEnvelope } from '../../wire/openai-errors.js';
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
  /** The chat routes: chat completions, and Anthropic's messages (in their own envelope). */
  chat: readonly BoundRoutes[];
}

/** A server fault: the message and type of OpenAI's envelope of an internal error, without its code and param. */
function internalBody(): { error: { message: string; type: string } } {
  const { message, type } = openAIErrorEnvelope(new AppError('internal', 'Internal server error')).error;
  return { error: { message, type } };
}

const INTERNAL_BODY = internalBody();

const storefrontBody: ScopeErrorBody = (_request, error, mapped) => {
  if (error.challenge?.body !== undefined) return mapped.body;
  if (mapped.status >= 500) return INTERNAL_BODY;
  return { error: mapped.status === 404 ? 'not_found' : 'invalid_request', message: exposedMessage(error) };
};

/** OpenAI's envelope on the storefront's chat, but a server fault in the storefront's shape. */
const CHAT_ERRORS: WireErrorFormat = {
  envelope: (error, answer) => (answer.status >= 500 ? INTERNAL_BODY : OPENAI_ERRORS.envelope(error, answer)),
  streamFrame: OPENAI_ERRORS.streamFrame,
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
        routes: routes.chat,
        policy: {
          rateLimit: {
            requestsPerMinute: deps.requestsPerMinute,
            limiter: deps.limiter,
            keyOf: (principal) => `storefront|${principal.projectId}|${principal.subject ?? ''}`,
            exceededMessage: 'Rate limit exceeded: too many requests per minute for this agent',
            exceededCode: 'requests_per_minute_exceeded',
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
          wireErrorVariants: new Map([[OPENAI_ERRORS, CHAT_ERRORS]]),
          trailers: [REMAINING_CREDIT_HEADER],
        },
      },
    ],
  };
}

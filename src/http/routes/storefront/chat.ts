/**
 * The storefront chat route, `{storefront}/gateway/v1/chat/completions`: the same chat
 * route module as /v1, mounted with apiScope under the storefront's strategy and meter.
 * Its error bodies: the storefront's own refusals as they are, the forwarded request
 * errors in the envelope with the spec's statuses (420 for context_length_exceeded, 429
 * requests_per_minute_exceeded per agent), and `500 {error: {message, type}}`.
 */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import type { Storefront } from '../../../composition/storefront.js';
import { AppError, isAppError } from '../../../domain/shared/errors.js';
import { OUTPUT_CAP_HEADER, REMAINING_CREDIT_HEADER, StorefrontMeter } from '../../../domain/storefront/storefront-meter.js';
import type { Seller } from '../../../domain/storefront/sellers.js';
import { StorefrontStrategy } from '../../auth/storefront-strategy.js';
import { toHttpError } from '../../errors.js';
import { apiScope } from '../api-scope.js';
import { registerChatCompletionsRoute } from '../v1/chat-completions.js';
import { tokenAudience } from './context.js';

function chatError(error: unknown): unknown {
  if (!isAppError(error)) return error;
  if (error.kind === 'rate_limit') {
    return new AppError('rate_limit', error.message, {
      code: 'requests_per_minute_exceeded',
      retryAfterSeconds: error.retryAfterSeconds,
    });
  }
  return error;
}

export async function registerStorefrontChat(scope: FastifyInstance, container: Container, storefront: Storefront): Promise<void> {
  const meters = new Map<string, StorefrontMeter>();
  const deps = {
    store: storefront.store,
    reservations: storefront.reservations,
    priceOf: (model: string) => container.config.models[model]?.price ?? { inputPerMillionUsd: 0, outputPerMillionUsd: 0 },
    clock: container.clock,
    usage: container.billing,
    basePath: storefront.config.prefix,
    policy: container.config.billing,
  };
  const meterOf = (seller: Seller) => {
    let meter = meters.get(seller.id);
    if (!meter) meters.set(seller.id, (meter = new StorefrontMeter(seller, deps)));
    return meter;
  };
  const strategy = new StorefrontStrategy({
    tokens: storefront.tokens,
    meterOf,
    audienceOf: tokenAudience,
    tokenPath: `${storefront.config.prefix}/oauth2/token`,
  });
  await scope.register(async (chat) => {
    chat.setErrorHandler((raw, request, reply) => {
      const error = chatError(raw);
      const mapped = toHttpError(error);
      let status = mapped.status;
      let body = mapped.body;
      if (isAppError(error) && error.code === 'context_length_exceeded') status = 420;
      if (status >= 500) body = { error: { message: 'Internal server error', type: 'internal_error' } };
      if (mapped.serverFault) request.log.error({ err: raw, request_id: request.id }, 'storefront chat failed');
      return reply.code(status).headers(mapped.headers).type('application/json').send(body);
    });
    await chat.register(apiScope, {
      prefix: '/gateway/v1',
      container,
      strategy,
      routes: [registerChatCompletionsRoute],
      policy: {
        rateLimit: {
          requestsPerMinute: storefront.config.requestsPerMinute,
          limiter: storefront.limiter,
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
        trailers: [REMAINING_CREDIT_HEADER],
      },
    });
  });
}

/** Everything under /v1: API-key auth and rate limits for the scope, then each route module. */
import type { FastifyPluginAsync } from 'fastify';
import type { Container } from '../../../container.js';
import { registerApiKeyAuth } from '../../plugins/api-key-auth.js';

const OPENAPI_PATH = '/v1/openapi.json';

export const v1Routes: FastifyPluginAsync<{ container: Container }> = async (scope, { container }) => {
  registerApiKeyAuth(scope, {
    authenticator: container.authenticator,
    rateLimiter: container.rateLimiter,
    requestsPerMinute: container.config.rateLimit.requestsPerMinute,
    publicPaths: new Set([OPENAPI_PATH]),
  });

  scope.get('/openapi.json', { schema: { hide: true } }, async () => scope.swagger());

  // Route modules register here, one line each.
};

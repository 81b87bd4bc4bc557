/** Everything under /v1: API-key auth and rate limits for the scope, then each route module. */
import type { FastifyPluginAsync } from 'fastify';
import type { Container } from '../../../container.js';
import { registerApiKeyAuth } from '../../plugins/api-key-auth.js';
import { registerChatCompletionsRoute } from './chat-completions.js';
import { registerResponsesRoute } from './responses.js';
import { registerEmbeddingsRoute } from './embeddings.js';
import { registerModerationsRoute } from './moderations.js';
import { registerModelsRoutes } from './models.js';
import { registerFilesRoutes } from './files.js';
import { registerBatchesRoutes } from './batches.js';
import { registerAudioRoutes } from './audio.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { OpenApiDocument } from '../../schemas/ops.js';

const OPENAPI_PATH = '/v1/openapi.json';

export const v1Routes: FastifyPluginAsync<{ container: Container }> = async (scope, { container }) => {
  registerApiKeyAuth(scope, {
    authenticator: container.authenticator,
    rateLimiter: container.rateLimiter,
    requestsPerMinute: container.config.rateLimit.requestsPerMinute,
    publicPaths: new Set([OPENAPI_PATH]),
  });

  scope.get('/openapi.json', { schema: { hide: true, response: { 200: OpenApiDocument } }, ...serializeAsBefore }, async () => scope.swagger());

  // Route modules register here, one line each.
  registerChatCompletionsRoute(scope, container);
  registerResponsesRoute(scope, container);
  registerEmbeddingsRoute(scope, container);
  registerModerationsRoute(scope, container);
  registerModelsRoutes(scope, container);
  registerAudioRoutes(scope, container);
  registerFilesRoutes(scope, container);
  registerBatchesRoutes(scope, container);
};

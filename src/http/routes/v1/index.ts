/** Everything under /v1: the route modules, admitted by API key and paid from project credit. */
import type { FastifyPluginAsync } from 'fastify';
import type { Container } from '../../../container.js';
import { ApiKeyStrategy } from '../../auth/api-key-strategy.js';
import { apiScope, type RouteModule } from '../api-scope.js';
import { registerChatCompletionsRoute } from './chat-completions.js';
import { registerCompletionsRoute } from './completions.js';
import { registerResponsesRoute } from './responses.js';
import { registerEmbeddingsRoute } from './embeddings.js';
import { registerModerationsRoute } from './moderations.js';
import { registerModelsRoutes } from './models.js';
import { registerFilesRoutes } from './files.js';
import { registerBatchesRoutes } from './batches.js';
import { registerAudioRoutes } from './audio.js';
import { registerDecisionRoute } from './systemone.js';
import { registerUsageRoutes } from './usage.js';
import { registerCatalogRoute } from './catalog.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { OpenApiDocument } from '../../schemas/ops.js';

/** Route modules register here, one line each. */
export const V1_ROUTE_MODULES: readonly RouteModule[] = [
  registerChatCompletionsRoute,
  registerCompletionsRoute,
  registerResponsesRoute,
  registerEmbeddingsRoute,
  registerModerationsRoute,
  registerModelsRoutes,
  registerAudioRoutes,
  registerFilesRoutes,
  registerBatchesRoutes,
  registerDecisionRoute,
  registerUsageRoutes,
  registerCatalogRoute,
];

/** How /v1 callers authenticate: an API key, in `x-api-key` or as a bearer token. */
export const API_KEY_SECURITY = [
  { name: 'ApiKey', scheme: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  { name: 'BearerApiKey', scheme: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token' } },
] as const;

export const v1Routes: FastifyPluginAsync<{ container: Container }> = async (scope, { container }) => {
  // Public: outside the authenticated scope below.
  scope.get('/openapi.json', { schema: { hide: true, response: { 200: OpenApiDocument } }, ...serializeAsBefore }, async () => scope.swagger());
  await scope.register(apiScope, {
    container,
    strategy: new ApiKeyStrategy(container.authenticator, container.creditMeter),
    routes: V1_ROUTE_MODULES,
    policy: { security: API_KEY_SECURITY },
  });
};

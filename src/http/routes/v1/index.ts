/** Everything under /v1: the route modules, admitted by API key and paid from project credit. */
import type { FastifyPluginAsync } from 'fastify';
import type { Container } from '../../../container.js';
import { ApiKeyStrategy } from '../../auth/api-key-strategy.js';
import { apiScope, type RouteModule } from '../api-scope.js';
import { registerChatCompletionsRoute } from './chat-completions.js';
import { registerResponsesRoute } from './responses.js';
import { registerEmbeddingsRoute } from './embeddings.js';
import { registerModerationsRoute } from './moderations.js';
import { registerModelsRoutes } from './models.js';
import { registerFilesRoutes } from './files.js';
import { registerBatchesRoutes } from './batches.js';
import { registerAudioRoutes } from './audio.js';
import { registerDecisionRoute } from '../decision/systemone.js';
import { registerUsageRoutes } from './usage.js';
import { registerCatalogRoute } from './catalog.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { OpenApiDocument } from '../../schemas/ops.js';

/** Route modules register here, one line each. */
export const V1_ROUTE_MODULES: readonly RouteModule[] = [
  registerChatCompletionsRoute,
  registerResponsesRoute,
  registerEmbeddingsRoute,
  registerModerationsRoute,
  registerModelsRoutes,
  registerAudioRoutes,
  registerFilesRoutes,
  registerBatchesRoutes,
  registerUsageRoutes,
  registerCatalogRoute,
];

export const v1Routes: FastifyPluginAsync<{ container: Container }> = async (scope, { container }) => {
  // Public: outside the authenticated scope below.
  scope.get('/openapi.json', { schema: { hide: true, response: { 200: OpenApiDocument } }, ...serializeAsBefore }, async () => scope.swagger());
  await scope.register(apiScope, {
    container,
    strategy: new ApiKeyStrategy(container.authenticator, container.creditMeter),
    routes: V1_ROUTE_MODULES,
  });
  // The decision route's own statuses (spec, POST /systemone): 402 when out of credit, 401 for a bad key.
  await scope.register(apiScope, {
    container,
    strategy: new ApiKeyStrategy(container.authenticator, container.creditMeter),
    routes: [registerDecisionRoute],
    statusOverrides: { insufficient_quota: 402, permission: 401 },
  });
};

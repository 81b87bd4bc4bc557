/** The route modules of /v1. */
import type { Container } from '../../../container.js';
import type { RouteModule } from '../../route-module.js';
import { registerChatCompletionsRoute } from './chat-completions.js';
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

/** Route modules register here, one line each. */
export const V1_ROUTE_MODULES: readonly RouteModule<Container>[] = [
  registerChatCompletionsRoute,
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
